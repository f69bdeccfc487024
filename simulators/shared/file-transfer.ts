/**
 * The HTTP side of firmware updates and log uploads, as chargers do it: firmware is a GET whose
 * body must be as long as its Content-Length says; a log goes up as a multipart/form-data POST
 * (1.6 diagnostics) or as the raw bytes of a PUT (2.0.1 logs).
 */
export async function downloadFile(url: string): Promise<Buffer> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET answered ${response.status}`);
  const body = Buffer.from(await response.arrayBuffer());
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared !== body.length) {
    throw new Error(`got ${body.length} bytes of ${declared}`);
  }
  return body;
}

export async function uploadFile(
  url: string,
  fileName: string,
  data: Buffer,
  how: 'multipart' | 'put',
): Promise<void> {
  let response: Response;
  if (how === 'multipart') {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(data)]), fileName);
    response = await fetch(url, { method: 'POST', body: form });
  } else {
    response = await fetch(`${url}/${encodeURIComponent(fileName)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array(data),
    });
  }
  if (!response.ok) throw new Error(`upload answered ${response.status}`);
}

/** The simulator's log: a few lines that name the station and the moment. */
export function simulatedLog(identity: string, firmwareVersion: string): Buffer {
  const at = new Date().toISOString();
  return Buffer.from(
    `${at} ${identity} firmware ${firmwareVersion}\n${at} ${identity} diagnostics: all connectors healthy\n`,
  );
}

/** The version a simulator reports after installing a file: its name without the extension. */
export function versionOf(location: string, maxLength: number): string {
  const name = decodeURIComponent(new URL(location).pathname.split('/').pop() ?? '');
  return (name.replace(/\.[^.]*$/, '') || 'updated').slice(0, maxLength);
}
