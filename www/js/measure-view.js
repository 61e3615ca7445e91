// The item's exact size against DynamoDB's 400 KB limit, and every rule it
// breaks, each with its path.

import { MAX_ITEM_BYTES } from 'dynaslice';
import { byId, fill, h } from './dom.js';
import { bytes, ratio } from './format.js';

/**
 * Places the meter's labels at their `data-at` percentages: the page's
 * Content-Security-Policy refuses inline `style` attributes, not styles set
 * from a script.
 */
export function placeScale() {
  for (const label of document.querySelectorAll('.meter-scale [data-at]')) label.style.left = `${label.dataset.at}%`;
}

/** Shows the exact size and how far over DynamoDB's limit it is. */
export function showSize(size) {
  const el = byId('size');
  el.textContent = bytes(size);
  el.dataset.bytes = String(size);
  const over = size > MAX_ITEM_BYTES;
  // The limit line sits at a quarter of the meter: 4× the limit fills it.
  const fillEl = byId('meter-fill');
  fillEl.style.width = `${Math.min(100, (size / (MAX_ITEM_BYTES * 4)) * 100)}%`;
  fillEl.classList.toggle('over', over);
  const text = over
    ? `${bytes(size - MAX_ITEM_BYTES)} over DynamoDB's 400 KB (409,600-byte) item limit: ${ratio(size / MAX_ITEM_BYTES)} the largest item it accepts.`
    : `Fits: ${bytes(MAX_ITEM_BYTES - size)} under DynamoDB's 400 KB (409,600-byte) item limit.`;
  const overEl = byId('over');
  overEl.textContent = text;
  overEl.dataset.overBytes = String(Math.max(0, size - MAX_ITEM_BYTES));
}

/**
 * Lists every rule the item breaks, with its path, and warns when the item
 * is over the server's own limit (`maxItemBytes` from /api/config).
 */
export function showProblems(violations, size, maxItemBytes) {
  const items = violations.map((v) => {
    const fixable = v.code === 'ITEM_TOO_LARGE';
    return h(
      'li',
      { dataset: { testid: 'problem', code: v.code, path: v.path } },
      h('span', { class: `code-badge${fixable ? ' warn' : ''}` }, v.code),
      h('span', { class: 'path' }, v.path === '' ? '(the whole item)' : v.path),
      h('span', {}, v.message),
      fixable ? h('span', { class: 'fixable' }, '— dynaslice compresses and splits it, so this one is fine.') : null,
    );
  });
  if (size > maxItemBytes) {
    items.push(
      h(
        'li',
        { dataset: { testid: 'problem', code: 'SERVER_LIMIT', path: '' } },
        h('span', { class: 'code-badge warn' }, 'SERVER_LIMIT'),
        h('span', {}, `This server accepts items up to ${bytes(maxItemBytes)}; it will refuse this one.`),
      ),
    );
  }
  if (items.length === 0) items.push(h('li', {}, h('span', { class: 'code-badge ok' }, 'OK'), h('span', {}, 'DynamoDB accepts this item as it is.')));
  fill(byId('problems'), items);
}

