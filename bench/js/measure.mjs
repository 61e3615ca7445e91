// Timing and tables for the Node benchmark: a warm-up, then the median of
// enough iterations to fill a time budget. Nothing here asserts on time.

/**
 * How long `fn` takes, as the median of its iterations, in milliseconds.
 * Warms up first (at least `warmup` calls and 100 ms), then runs at least
 * `min` iterations and until `budgetMs` is spent, at most `max`. With
 * `collect` (and node --expose-gc), collects garbage before each timed call,
 * so one call's garbage is not charged to the next.
 * @param {() => unknown | Promise<unknown>} fn
 */
export async function measure(fn, { warmup = 3, min = 7, max = 200, budgetMs = 1500, collect = false } = {}) {
  const gc = collect ? globalThis.gc : undefined;
  const started = process.hrtime.bigint();
  for (let i = 0; i < warmup || elapsedMs(started) < 100; i++) {
    await fn();
    if (i >= warmup && elapsedMs(started) > budgetMs) break;
  }
  const times = [];
  const begun = process.hrtime.bigint();
  while (times.length < min || (times.length < max && elapsedMs(begun) < budgetMs)) {
    gc?.();
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { ms: times[times.length >> 1], n: times.length };
}

function elapsedMs(since) {
  return Number(process.hrtime.bigint() - since) / 1e6;
}

/** 10^6 bytes per second for `bytes` in `ms`. */
export const mbps = (bytes, ms) => bytes / 1e3 / ms;

/** A number with thousands separators and `digits` decimals. */
export function num(value, digits = 0) {
  if (value === undefined || value === null || Number.isNaN(value)) return '—';
  return value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/** Milliseconds with about three significant digits. */
export function ms(value) {
  if (value === undefined) return '—';
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3;
  return `${num(value, digits)} ms`;
}

/**
 * Prints a Markdown table: `columns` are header names (a leading `<` aligns
 * left; numbers align right), `rows` arrays of cells.
 */
export function table(title, columns, rows) {
  const left = columns.map((c) => c.startsWith('<'));
  const headers = columns.map((c) => c.replace(/^</, ''));
  const cells = rows.map((r) => r.map((c) => String(c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (r) =>
    `| ${r.map((c, i) => (left[i] ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  console.log(`\n### ${title}\n`);
  console.log(line(headers));
  console.log(`|${widths.map((w, i) => (left[i] ? ` :${'-'.repeat(w - 1)} ` : ` ${'-'.repeat(w - 1)}: `)).join('|')}|`);
  for (const r of cells) console.log(line(r));
}
