export interface Page<T> {
  items: T[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** Adds `sql` (which names @name) when the value is given. */
export function bind(
  params: Record<string, unknown>,
  parts: string[],
  sql: string,
  name: string,
  value: unknown,
): void {
  if (value === undefined) return;
  params[name] = value;
  parts.push(sql);
}

export function where(parts: string[]): string {
  return parts.length ? `WHERE ${parts.join(' AND ')}` : '';
}
