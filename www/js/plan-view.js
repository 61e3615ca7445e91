// The write plan as a picture: the requests in the order they are sent,
// each holding its items as blocks whose width is their exact size (a full
// block is one 400 KB DynamoDB item), and the cost in WCU and RCU.

import { MAX_ITEM_BYTES } from 'dynaslice';
import { h, fill } from './dom.js';
import { bytes, count, shortBytes, units } from './format.js';

/** Pixels for a full 409,600-byte item. */
const FULL_BLOCK_PX = 88;

/**
 * The requests of a split result as they will be sent (the package's
 * `capacity`), each item a block `{ kind: 'parent' | 'chunk', bytes }`.
 * @param {import('dynaslice').SplitResult} result
 */
export function requestGroups(result) {
  return result.capacity.map((request) => ({
    request: request.operation,
    transactional: request.transactional,
    wcu: request.writeUnits,
    blocks: request.items.map((item) => ({ kind: item.chunk ? 'chunk' : 'parent', bytes: item.bytes })),
  }));
}

/** Why the write takes the requests it takes, from their shape. */
function explain(manifest, groups) {
  if (manifest?.inline) return 'Compressed, the large attributes fit on the parent itself: one PutItem writes it, with no chunks.';
  if (groups.length > 1) {
    return 'Too large for one transaction (over 100 actions or 4 MB): the chunks go first in BatchWriteItem requests of up to 25 items, then one conditional PutItem of the parent commits the new version. Until that commit, readers see the old item, never a mix.';
  }
  if (groups[0].transactional) {
    return 'One TransactWriteItems writes every chunk and the parent together, all or nothing, so no orphan chunk can exist. Transactions cost twice the write units.';
  }
  return 'The item fits in one DynamoDB item as it is: one PutItem writes it.';
}

/**
 * Both modes' write costs: a transaction bills every write twice.
 * @param {{ batch: number, atomic: number | null }} costs
 */
function modeCosts(costs) {
  const atomic = costs.atomic === null ? 'does not fit one transaction' : `${units(costs.atomic)} WCU`;
  return `batch ${units(costs.batch)} WCU · atomic ${atomic}`;
}

/**
 * Draws `plan` into `container`.
 * @param {HTMLElement} container
 * @param {{ result: import('dynaslice').SplitResult, codecChoice: string, parentBytes: number,
 *   readUnits: number, readRequests: number, groups: ReturnType<typeof requestGroups> }} plan
 */
export function renderPlan(container, plan) {
  const { result, groups } = plan;
  const manifest = result.manifest;
  const codec = manifest ? manifest.codec : 'none';
  const chunkBlocks = groups.flatMap((g) => g.blocks).filter((b) => b.kind === 'chunk');
  Object.assign(container.dataset, {
    mode: result.requests.mode,
    codec,
    chunks: String(result.chunks.length),
    wcu: String(result.writeUnits),
    wcuBatch: String(result.costs.batch),
    wcuAtomic: String(result.costs.atomic ?? ''),
    rcu: String(plan.readUnits),
    storedBytes: String(manifest ? manifest.storedBytes : plan.parentBytes),
    parentBytes: String(plan.parentBytes),
    requests: String(groups.length),
  });

  const summary = h(
    'dl',
    { class: 'facts', id: 'plan-summary' },
    fact('Mode', result.requests.mode, 'plan-mode'),
    fact('Codec', plan.codecChoice === 'auto' ? `${codec} (auto)` : codec, 'plan-codec'),
    fact('Stored', manifest ? `${bytes(manifest.storedBytes)}${manifest.inline ? ', inline on the parent' : ''}` : bytes(plan.parentBytes), 'plan-stored'),
    fact('Chunks', count(result.chunks.length), 'plan-chunks'),
    fact('Parent', bytes(plan.parentBytes), 'plan-parent'),
    fact('Requests', `${count(groups.length)} to write`, 'plan-requests'),
    fact('Write cost', `${units(result.writeUnits)} WCU`, 'plan-wcu'),
    fact('By mode', modeCosts(result.costs), 'plan-costs'),
    fact('Read cost', `${units(plan.readUnits)} RCU`, 'plan-rcu'),
  );

  let seq = 0;
  const requests = h(
    'ol',
    { class: 'requests', 'aria-label': 'Requests in the order they are sent' },
    groups.map((group, index) => {
      const { wcu } = group;
      const chunks = group.blocks.filter((b) => b.kind === 'chunk').length;
      const range = chunks === 1 ? `chunk ${seq}` : `chunks ${seq}–${seq + chunks - 1}`;
      const role = describe(group, index, groups, range, chunks);
      const parent = group.blocks.find((b) => b.kind === 'parent');
      return h(
        'li',
        { class: `request request-${group.request}`, dataset: { testid: 'request', kind: group.request, items: String(group.blocks.length), wcu: String(wcu) } },
        h('div', { class: 'request-head' }, h('strong', {}, group.request), h('span', { class: 'muted' }, ` — ${role} · ${units(wcu)} WCU`)),
        h(
          'div',
          { class: 'blocks' },
          group.blocks.map((b) => {
            const label = b.kind === 'chunk' ? `chunk ${seq++}` : 'parent';
            const width = Math.max(6, Math.round((b.bytes / MAX_ITEM_BYTES) * FULL_BLOCK_PX));
            return h(
              'div',
              {
                class: `block block-${b.kind}`,
                style: { width: `${width}px` },
                title: `${label}: ${bytes(b.bytes)}`,
                role: 'img',
                'aria-label': `${label}, ${bytes(b.bytes)}`,
                dataset: { testid: b.kind === 'chunk' ? 'chunk' : 'parent', bytes: String(b.bytes) },
              },
              width >= 44 ? h('span', { class: 'block-label' }, label.replace('chunk ', '#'), h('small', {}, shortBytes(b.bytes))) : null,
            );
          }),
          // A small parent is a sliver: say what it is beside it.
          parent && (parent.bytes / MAX_ITEM_BYTES) * FULL_BLOCK_PX < 44 ? h('span', { class: 'block-caption muted' }, `parent, ${bytes(parent.bytes)}`) : null,
        ),
      );
    }),
  );

  const reading = plan.readRequests
    ? `GetItem of the parent, then ${count(plan.readRequests)} BatchGetItem request${plan.readRequests === 1 ? '' : 's'} for ${count(chunkBlocks.length)} chunks`
    : 'GetItem of the parent alone';
  fill(
    container,
    summary,
    h('p', { class: 'explain' }, explain(manifest, groups)),
    requests,
    h(
      'p',
      { class: 'legend muted' },
      h('span', { class: 'swatch block-parent', 'aria-hidden': 'true' }),
      ' parent  ',
      h('span', { class: 'swatch block-chunk', 'aria-hidden': 'true' }),
      ` chunk — width is the item's exact size; a full block is DynamoDB's 400 KB item limit. Reading it back: ${reading}, ${units(plan.readUnits)} RCU (strongly consistent).`,
    ),
  );
}

/** What one request writes, in words. */
function describe(group, index, groups, range, chunks) {
  if (group.request === 'TransactWriteItems') return `${range} and the parent, all or nothing`;
  if (group.request === 'BatchWriteItem') {
    const batches = groups.filter((g) => g.request === 'BatchWriteItem').length;
    return `${range} (batch ${index + 1} of ${batches}, ${count(chunks)} items)`;
  }
  // A PutItem after other requests commits what they wrote.
  return groups.length > 1 ? 'the parent: the commit point' : 'the whole item, in one write';
}

function fact(term, value, id) {
  return h('div', {}, h('dt', {}, term), h('dd', { id }, value));
}
