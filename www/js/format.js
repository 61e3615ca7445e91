// Numbers as people read them. Sizes use DynamoDB's units: 1 KB is 1,024
// bytes, so its item limit of 409,600 bytes is "400 KB".

const whole = new Intl.NumberFormat('en-US');

/** `5000567` → `"5,000,567"`. */
export function count(n) {
  return whole.format(n);
}

/** `5000567` → `"5,000,567 bytes"`. */
export function bytes(n) {
  return `${whole.format(n)} ${n === 1 ? 'byte' : 'bytes'}`;
}

/** `5000567` → `"4.77 MB"`, `409600` → `"400 KB"`: short, in DynamoDB's 1,024-based units. */
export function shortBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = value >= 100 || Number.isInteger(value) ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${units[unit]}`;
}

/** Milliseconds as `"12 ms"` or `"1.42 s"`. */
export function duration(ms) {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** A ratio as `"6.49×"`. */
export function ratio(r) {
  return `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`;
}

/** Capacity units: whole numbers as they are, halves (eventually consistent reads) kept. */
export function units(n) {
  return Number.isInteger(n) ? whole.format(n) : n.toFixed(1);
}
