/**
 * The first file in a multipart/form-data body (RFC 7578): what 1.6 chargers POST their
 * diagnostics as. Null when the body is not multipart or has no part; the part named with a
 * filename wins, else the first part.
 */
export function firstFilePart(
  contentType: string,
  body: Buffer,
): { fileName: string | null; data: Buffer } | null {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const mark = boundary?.[1] ?? boundary?.[2];
  if (!mark) return null;
  const delimiter = Buffer.from(`--${mark}`);
  const parts: { fileName: string | null; data: Buffer }[] = [];
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    const part = body.subarray(start, next);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd !== -1) {
      const headers = part.subarray(0, headerEnd).toString('latin1');
      // The data ends before the CRLF that precedes the next delimiter.
      const end = part.length >= 2 && part.subarray(-2).toString() === '\r\n' ? -2 : part.length;
      const fileName = /filename="([^"]*)"/i.exec(headers)?.[1] ?? null;
      parts.push({ fileName, data: part.subarray(headerEnd + 4, end) });
    }
    at = next;
  }
  return parts.find((p) => p.fileName !== null) ?? parts[0] ?? null;
}
