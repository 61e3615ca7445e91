// The stored items (GET /api/items) with inspect and delete, and the
// inspect report (GET /api/inspect) shown as facts, a chunk table and the
// JSON itself.

import { h, fill } from './dom.js';
import { bytes, count, units } from './format.js';

/** A key in DynamoDB JSON as people read it: its values, joined by " / ". */
export function keyText(key) {
  return Object.values(key)
    .map((value) => Object.values(value)[0])
    .join(' / ');
}

/**
 * Fills the list.
 * @param {HTMLTableSectionElement} body
 * @param {Array<{ key: object, parentBytes: number, manifest: object | null }>} items
 * @param {{ inspect: (key: object) => void, remove: (key: object, button: HTMLButtonElement) => void }} actions
 */
export function renderItems(body, items, actions) {
  const table = body.closest('table');
  table.dataset.count = String(items.length);
  if (items.length === 0) {
    fill(body, h('tr', {}, h('td', { colspan: '6', class: 'muted empty' }, 'No items stored yet.')));
    return;
  }
  const sorted = [...items].sort((a, b) => keyText(a.key).localeCompare(keyText(b.key)));
  fill(
    body,
    sorted.map((item) => {
      const text = keyText(item.key);
      const m = item.manifest;
      return h(
        'tr',
        { dataset: { testid: 'item-row', key: text } },
        h('th', { scope: 'row', class: 'key' }, text),
        h('td', { class: 'num' }, bytes(item.parentBytes)),
        h('td', { class: 'num' }, m ? bytes(m.storedBytes) : '—'),
        h('td', {}, m ? m.codec : 'not split'),
        h('td', { class: 'num' }, m ? count(m.chunks ?? m.chunkCount ?? 0) : '0'),
        h(
          'td',
          { class: 'actions' },
          h('button', { type: 'button', class: 'small', dataset: { action: 'inspect' }, 'aria-label': `Inspect ${text}`, onclick: () => actions.inspect(item.key) }, 'Inspect'),
          h('button', {
            type: 'button',
            class: 'small danger',
            dataset: { action: 'delete' },
            'aria-label': `Delete ${text}`,
            onclick: (event) => actions.remove(item.key, event.currentTarget),
          }, 'Delete'),
        ),
      );
    }),
  );
}

/** Shows an inspect report. */
export function renderInspect(container, report) {
  const m = report.manifest;
  const chunks = report.chunks ?? [];
  const shown = chunks.slice(0, 40);
  container.hidden = false;
  container.dataset.key = keyText(report.key ?? {});
  fill(
    container,
    h('h3', {}, 'Inspect: ', h('span', { class: 'key' }, keyText(report.key ?? {}))),
    h(
      'dl',
      { class: 'facts' },
      fact('Layout', `${report.layout}, chunks in ${report.chunkTable}`),
      fact('Parent', bytes(report.parentBytes)),
      m ? fact('Payload', `${bytes(m.rawBytes)} encoded → ${bytes(m.storedBytes)} stored (${m.codec})`) : fact('Payload', 'not split: the item is stored as it is'),
      m ? fact('Version', m.version) : null,
      fact('Chunks', count(chunks.length)),
      fact('Read cost', `${units(report.readUnits)} RCU`),
      fact('Rewrite cost', `${units(report.writeUnits)} WCU in batches`),
    ),
    chunks.length
      ? h(
          'table',
          { class: 'grid compact' },
          h('caption', {}, `Chunk items${chunks.length > shown.length ? ` (first ${shown.length} of ${count(chunks.length)})` : ''}`),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Chunk key'), h('th', { scope: 'col', class: 'num' }, 'Data'), h('th', { scope: 'col', class: 'num' }, 'Item'))),
          h(
            'tbody',
            {},
            shown.map((c) => h('tr', {}, h('td', { class: 'key' }, keyText(c.key)), h('td', { class: 'num' }, bytes(c.dataBytes)), h('td', { class: 'num' }, bytes(c.itemBytes)))),
          ),
        )
      : null,
    h('details', {}, h('summary', {}, 'The inspect JSON'), h('pre', { class: 'json', id: 'inspect-json' }, JSON.stringify(report, null, 2))),
  );
}

function fact(term, value) {
  return h('div', {}, h('dt', {}, term), h('dd', {}, value));
}
