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

/** Every page `page` gives, walked by its numeric cursor: for exports that must not hold the database. */
export function* allPages<T>(page: (before: number | undefined) => Page<T>): Generator<T[]> {
  let before: number | undefined;
  for (;;) {
    const p = page(before);
    if (p.items.length) yield p.items;
    if (p.nextCursor === null) return;
    before = Number(p.nextCursor);
  }
}
