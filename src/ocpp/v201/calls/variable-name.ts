/** An operator names a 2.0.1 variable `Component.Variable`; the first dot splits them. */
export function splitVariableName(key: string): { component: string; variable: string } | null {
  const dot = key.indexOf('.');
  if (dot <= 0 || dot === key.length - 1) return null;
  return { component: key.slice(0, dot), variable: key.slice(dot + 1) };
}
