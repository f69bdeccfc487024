type Maybe<T> = T | undefined | false | null;

/** Polls until `probe` yields a value (not undefined/false/null) or the time runs out. */
export async function waitUntil<T>(
  probe: () => Maybe<T> | Promise<Maybe<T>>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false && value !== null) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
