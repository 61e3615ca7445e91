// The codec comparison table, filled row by row by a Web Worker
// (codec-worker.js); the row `auto` would pick is highlighted.

import { h, fill } from './dom.js';
import { bytes, count, duration, ratio, units } from './format.js';

const CODECS = ['none', 'deflate', 'zlib', 'gzip', 'snappy', 'zstd'];

/** Runs comparisons in a worker; a new one replaces a running one. */
export class CodecComparison {
  /**
   * @param {HTMLTableSectionElement} body the table body to fill
   * @param {HTMLElement} status where progress and the outcome are said
   * @param {(error: object) => string} describe turns an error into a sentence
   */
  constructor(body, status, describe) {
    this.body = body;
    this.status = status;
    this.describe = describe;
    this.worker = null;
    this.job = 0;
    this.busy = false;
  }

  /** The worker, started on first use (and again after a cancelled job). */
  ensureWorker() {
    if (this.worker) return this.worker;
    this.worker = new Worker(new URL('./codec-worker.js', import.meta.url), { type: 'module' });
    this.worker.onmessage = ({ data }) => this.receive(data);
    this.worker.onerror = (event) => {
      event.preventDefault();
      this.finish('failed', this.describe({ code: 'WASM_LOAD', message: event.message }));
    };
    return this.worker;
  }

  /** Compares every codec on `item` (in `options.format`). */
  start(item, options) {
    if (this.busy) {
      // Whatever it computes is for an item no longer shown: stop it now.
      this.worker.terminate();
      this.worker = null;
    }
    this.job += 1;
    this.busy = true;
    this.started = performance.now();
    this.body.closest('table').dataset.state = 'running';
    fill(
      this.body,
      CODECS.map((codec) => h('tr', { dataset: { testid: 'codec-row', codec } }, h('th', { scope: 'row' }, codec), h('td', { colspan: '6', class: 'muted' }, 'measuring…'))),
    );
    fill(this.status, 'Splitting the item with each codec in a Web Worker…');
    this.ensureWorker().postMessage({ job: this.job, item, options });
  }

  /** Empties the table (no item). */
  clear() {
    if (this.busy) {
      this.worker.terminate();
      this.worker = null;
      this.busy = false;
    }
    this.job += 1;
    fill(this.body);
    fill(this.status, 'Choose an item to compare codecs.');
    this.body.closest('table').dataset.state = 'empty';
  }

  receive(message) {
    if (message.job !== this.job) return;
    if (message.type === 'row') this.showRow(message.row);
    if (message.type === 'failed') this.finish('failed', this.describe(message.error));
    if (message.type === 'done') {
      const auto = message.auto;
      if (auto.error) {
        this.finish('failed', this.describe(auto.error));
        return;
      }
      const picked = auto.split ? auto.picked : 'none';
      const row = this.body.querySelector(`tr[data-codec="${picked}"]`);
      if (row) {
        row.classList.add('recommended');
        row.dataset.recommended = 'true';
        row.querySelector('th').append(h('span', { class: 'badge' }, 'recommended'));
      }
      const why = auto.split
        ? `auto picks ${picked}: the smallest stored size, or a faster codec within 5 % of it.`
        : 'The item fits in one DynamoDB item as it is: nothing to compress.';
      this.body.closest('table').dataset.recommended = picked;
      this.finish('done', `Compared in ${duration(performance.now() - this.started)} (off the page's thread). Recommended: ${picked}. ${why}`);
    }
  }

  finish(state, text) {
    this.busy = false;
    this.body.closest('table').dataset.state = state;
    fill(this.status, text);
  }

  showRow(row) {
    const tr = this.body.querySelector(`tr[data-codec="${row.codec}"]`);
    if (!tr) return;
    if (row.error) {
      fill(tr, h('th', { scope: 'row' }, row.codec), h('td', { colspan: '6', class: 'muted' }, this.describe(row.error)));
      return;
    }
    Object.assign(tr.dataset, { storedBytes: String(row.storedBytes), chunks: String(row.chunks), wcu: String(row.writeUnits), mode: row.mode });
    fill(
      tr,
      h('th', { scope: 'row' }, row.codec),
      h('td', { class: 'num', title: bytes(row.storedBytes) }, bytes(row.storedBytes), row.inline ? h('span', { class: 'muted' }, ' inline') : null),
      h('td', { class: 'num' }, row.split ? ratio(row.rawBytes / row.storedBytes) : '—'),
      h('td', { class: 'num' }, duration(row.ms)),
      h('td', { class: 'num' }, count(row.chunks)),
      h('td', {}, row.mode),
      h('td', { class: 'num' }, units(row.writeUnits)),
    );
  }
}
