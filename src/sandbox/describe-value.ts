/**
 * How a JSON value reads in a message: an array or an object by its kind, anything else as its
 * JSON text, cut at 60 characters. With `withType` a plain value also names its JSON type, so that
 * a wrong type is obvious (`"12" (a string)`); the filter messages use that.
 */
export function describeValue(value: unknown, options: { withType?: boolean } = {}): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return options.withType ? `${shown} (a ${typeof value})` : shown;
}
