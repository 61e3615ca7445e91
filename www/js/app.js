// The dynaslice page: one item through its whole life. Choose it (sample,
// file or pasted JSON), measure and validate it, compare codecs (in a Web
// Worker), see the plan, upload it, read it back and verify every byte,
// preview it, list, inspect and delete stored items.
//
// The package is imported by its name: the page's import map points
// "dynaslice" at /pkg/dynaslice/js/browser.js, as a user's app would.
import init, { chunkData, crc32, itemSize, validateItem, split, readCapacity, readRequests, NumberValue } from 'dynaslice';
import * as api from './api.js';
import { CodecComparison } from './codec-view.js';
import { byId, fill, h } from './dom.js';
import { PageError, sentence, tokenNeeded } from './errors.js';
import { bytes, count, duration, shortBytes } from './format.js';
import { keyText, renderInspect, renderItems } from './items-view.js';
import { placeScale, showProblems, showSize } from './measure-view.js';
import { renderPlan, requestGroups } from './plan-view.js';
import { orderHistory, SAMPLE_SIZES } from './sample.js';
import { parsePasted } from './pasted.js';
import { compareStored, previewText } from './readback.js';
import { takeToken } from './token.js';
import { fromBase64, itemToWire, toBase64, uploadBody } from './wire.js';

/** A plan older than this is split again before uploading, so the plan shown is the one sent (the server stamps every upload with its own fresh version). */
const PLAN_FRESH_MS = 5 * 60 * 1000;
const PREVIEW_BYTES = 2048;

const state = {
  config: null,
  table: null,
  /** What the user chose: `{ kind: 'sample' | 'file' | 'paste', ... }`. */
  source: null,
  /** The item built from the source and the key fields. */
  current: null,
  plan: null,
  upload: null,
  analysis: 0,
};

const comparison = new CodecComparison(byId('codec-rows'), byId('codec-status'), (error) => sentence(error, state.config ?? {}));

// ---------------------------------------------------------------- errors

function showError(error) {
  const text = sentence(error, state.config ?? {});
  byId('error-text').textContent = text;
  const box = byId('error');
  box.dataset.code = error?.code ?? 'UNKNOWN';
  box.hidden = false;
  return text;
}

function clearError() {
  byId('error').hidden = true;
  byId('error-text').textContent = '';
}

byId('error-close').addEventListener('click', clearError);
// Nothing escapes as a stack trace: anything unexpected becomes a sentence.
window.addEventListener('error', (event) => showError(event.error ?? { message: event.message }));
window.addEventListener('unhandledrejection', (event) => {
  event.preventDefault();
  showError(event.reason);
});

/** Runs `action`, showing any failure as a sentence; the page keeps working. */
function guarded(action) {
  return async (...args) => {
    try {
      await action(...args);
    } catch (error) {
      showError(error);
    }
  };
}

/** Lets the browser paint before a long synchronous step. */
function nextFrame() {
  return new Promise((resolve) => {
    let done = false;
    const go = () => {
      if (!done) {
        done = true;
        resolve();
      }
    };
    requestAnimationFrame(() => setTimeout(go, 0));
    setTimeout(go, 50);
  });
}

// ---------------------------------------------------------------- table and key

function tableOptions() {
  const t = state.table;
  // The table's index keys and TTL attribute stay on the parent (the server refuses an upload
  // that spills them), and the chunks leave room for the TTL value.
  // Splits and read plans for items up to the server's limit when it is over the package's
  // default of 64 MiB (an item over a lower limit is still planned: the server says why not).
  const limit = Math.max(state.config.maxItemBytes, 64 * 1024 * 1024);
  return { table: t.name, key: t.key, layout: t.layout === 'collection' ? 'collection' : 'table', chunkTable: t.chunkTable, indexKeys: t.indexKeys ?? [], ttl: t.ttl ?? null, anchors: t.anchors === true, maxRawBytes: limit, maxBytes: limit };
}

const TYPE_NAMES = { S: 'text', N: 'number', B: 'base64 bytes' };

function renderKeyFields() {
  const prefix = state.config.keyPrefix ?? '';
  fill(
    byId('key-fields'),
    state.table.key.map((k, i) =>
      h(
        'label',
        { class: 'field' },
        `${i === 0 ? 'Key' : 'Sort key'}: ${k.name} (${TYPE_NAMES[k.type]})`,
        h('input', {
          id: i === 0 ? 'key' : 'sort-key',
          type: 'text',
          autocomplete: 'off',
          spellcheck: 'false',
          value: i === 0 ? (k.type === 'S' ? `${prefix}orders-2026` : k.type === 'N' ? '2026' : '') : k.type === 'S' ? 'v1' : '1',
          oninput: onKeyInput,
        }),
      ),
    ),
  );
  updateKeyHint();
}

function keyInputs() {
  return state.table.key.map((k, i) => ({ ...k, text: byId(i === 0 ? 'key' : 'sort-key').value }));
}

/** The key attributes from the key fields, in DynamoDB JSON or plain values. */
function keyAttributes(format) {
  const out = {};
  for (const k of keyInputs()) {
    if (format === 'plain') out[k.name] = k.type === 'S' ? k.text : k.type === 'N' ? new NumberValue(k.text.trim()) : fromBase64(k.text.trim());
    else out[k.name] = { [k.type]: k.type === 'S' ? k.text : k.text.trim() };
  }
  return out;
}

function updateKeyHint() {
  const prefix = state.config.keyPrefix;
  const hint = byId('key-hint');
  if (!prefix) {
    hint.textContent = 'Any key is accepted by this server.';
    hint.classList.remove('warn');
    return;
  }
  const pk = byId('key').value;
  const inside = pk.startsWith(prefix);
  hint.textContent = inside
    ? `This server only accepts keys starting with “${prefix}”.`
    : `This server only accepts keys starting with “${prefix}”: it will refuse this one.`;
  hint.style.color = inside ? '' : 'var(--warn)';
}

let keyTimer = 0;
function onKeyInput() {
  updateKeyHint();
  clearTimeout(keyTimer);
  if (!state.source) return;
  // The plan holds the old key until the item is measured again.
  byId('upload').disabled = true;
  byId('plan').dataset.state = 'pending';
  keyTimer = setTimeout(guarded(analyze), 300);
}

// ---------------------------------------------------------------- sources

function sampleSizes() {
  fill(
    byId('sample-size'),
    SAMPLE_SIZES.map((n) => h('option', { value: String(n), selected: n === 5 << 20 }, `${shortBytes(n)} order history`)),
  );
}

const loadSample = guarded(async () => {
  clearError();
  // The previous item's plan is stale from this moment, not only once the
  // new one is measured (its "ready" state must not outlive it).
  resetDownstream();
  const size = Number(byId('sample-size').value);
  setSourceStatus(`Generating a ${shortBytes(size)} order history…`);
  await nextFrame();
  const started = performance.now();
  const text = orderHistory(size);
  const ms = performance.now() - started;
  state.source = { kind: 'sample', text, size, label: `Sample: an order history of ${bytes(new TextEncoder().encode(text).length)} of JSON, generated in ${duration(ms)}.` };
  await analyze();
});

async function useFile(file) {
  clearError();
  if (!file) return;
  resetDownstream();
  const limit = state.config.maxItemBytes;
  if (file.size > limit) {
    throw new PageError('FILE_TOO_LARGE', `“${file.name}” is ${bytes(file.size)}, more than this server accepts (${bytes(limit)}). Choose a smaller file.`);
  }
  setSourceStatus(`Reading “${file.name}”…`);
  const data = new Uint8Array(await file.arrayBuffer());
  state.source = { kind: 'file', name: file.name, data, label: `File: “${file.name}”, ${bytes(data.length)}.` };
  await analyze();
}

const usePaste = guarded(async () => {
  clearError();
  const text = byId('paste').value;
  const format = document.querySelector('input[name="format"]:checked').value;
  parsePasted(text);
  state.source = { kind: 'paste', text, format, label: `Pasted JSON (${format === 'plain' ? 'plain JSON' : 'DynamoDB JSON'}), ${bytes(new TextEncoder().encode(text).length)} of text.` };
  await analyze();
});

function setSourceStatus(text) {
  byId('source-status').textContent = text;
}

/**
 * The item for the current source and key: `{ item, format, attribute,
 * expected }` where `expected()` gives the bytes that must come back for
 * `attribute` (sample and file), or null when the whole item is compared.
 */
function buildItem() {
  const source = state.source;
  if (source.kind === 'sample') {
    return { item: { ...keyAttributes('dynamodb'), body: { S: source.text } }, format: 'dynamodb', attribute: 'body', expected: () => new TextEncoder().encode(source.text) };
  }
  if (source.kind === 'file') {
    return { item: { ...keyAttributes('dynamodb'), fileName: { S: source.name }, data: { B: source.data } }, format: 'dynamodb', attribute: 'data', expected: () => source.data };
  }
  // Pasted: the key fields set the item's key (a pasted key is replaced).
  const item = { ...parsePasted(source.text), ...keyAttributes(source.format) };
  return { item, format: source.format, attribute: null, expected: null };
}

// ---------------------------------------------------------------- measure, compare, plan

function resetDownstream() {
  state.plan = null;
  byId('upload').disabled = true;
  const plan = byId('plan');
  plan.dataset.state = 'empty';
  fill(plan, h('p', { class: 'muted' }, 'No item yet.'));
  byId('verify').dataset.state = 'idle';
  byId('verify').textContent = '';
  byId('upload-status').textContent = '';
  byId('progress').value = 0;
  byId('progress-text').textContent = '';
  byId('preview-box').hidden = true;
}

async function analyze() {
  clearTimeout(keyTimer);
  const job = ++state.analysis;
  resetDownstream();
  const measure = byId('measure');
  try {
    state.current = buildItem();
  } catch (error) {
    state.current = null;
    measure.dataset.state = 'error';
    comparison.clear();
    throw error;
  }
  setSourceStatus(state.source.label);
  const { item, format } = state.current;
  let size;
  try {
    size = itemSize(item, { format });
  } catch (error) {
    measure.dataset.state = 'error';
    fill(byId('problems'), h('li', {}, sentence(error, state.config)));
    byId('size').textContent = '—';
    comparison.clear();
    throw error;
  }
  showSize(size);
  showProblems(validateItem(item, { format, key: state.table.key }), size, state.config.maxItemBytes);
  measure.dataset.state = 'measured';
  comparison.start(item, { ...tableOptions(), format });
  byId('plan').dataset.state = 'planning';
  fill(byId('plan'), h('p', { class: 'muted' }, 'Planning…'));
  await nextFrame();
  if (job !== state.analysis) return;
  makePlan();
}

function makePlan() {
  const planEl = byId('plan');
  state.plan = null;
  byId('upload').disabled = true;
  if (!state.current) return;
  const { item, format } = state.current;
  const codecChoice = byId('codec').value;
  const options = tableOptions();
  const started = performance.now();
  let result;
  try {
    result = split(item, { ...options, format, codec: codecChoice });
  } catch (error) {
    planEl.dataset.state = 'error';
    fill(planEl, h('p', { class: 'status' }, `No plan: ${sentence(error, state.config)}`));
    return;
  }
  const ms = performance.now() - started;
  const parentBytes = itemSize(result.parent);
  const reads = readRequests(result.parent, options);
  state.plan = {
    result,
    codecChoice,
    parentBytes,
    // A strongly consistent GetItem of the parent, then the chunks' BatchGetItems.
    readUnits: readCapacity(result.parent, options).readUnits,
    readRequests: reads.batchGetItems.length,
    groups: requestGroups(result),
    createdAt: Date.now(),
    ms,
  };
  renderPlan(planEl, state.plan);
  planEl.dataset.state = 'ready';
  planEl.append(h('p', { class: 'hint muted' }, `Split in ${duration(ms)} in this page with the npm package.`));
  byId('upload').disabled = false;
}

// ---------------------------------------------------------------- upload and verify

/**
 * True when the split's payload goes straight to S3 (docs/API.md, "Uploads
 * straight to S3"): the table keeps payloads in S3, the payload is one
 * attribute's frame in chunks, at least the table's threshold, in a codec
 * that streams (the server reads raw snappy whole).
 */
function straightToS3(table, result, attribute) {
  const manifest = result.manifest;
  return Boolean(
    table.s3 &&
      attribute &&
      manifest &&
      !manifest.inline &&
      manifest.groups === 0 &&
      manifest.spilled.length === 1 &&
      manifest.spilled[0] === attribute &&
      manifest.codec !== 'snappy' &&
      manifest.rawBytes >= table.s3.thresholdBytes,
  );
}

/**
 * The split's frame (`frame`, its chunks' data in order) PUT straight to S3
 * with the URL the server grants, then committed by the server once it
 * checked it. The parent goes without its manifest (`_ds`, docs/FORMAT.md
 * §5): the server writes its own. Returns `{ done, abort }` as api.upload.
 */
function uploadToS3(table, result, attribute, frame, onProgress) {
  let put;
  let aborted = false;
  const done = (async () => {
    const { _ds: _, ...parent } = result.parent;
    const sum = new Uint8Array(4);
    new DataView(sum.buffer).setUint32(0, crc32(result.chunks.map((c) => chunkData(c))));
    const granted = await api.grantObject(table, { parent: itemToWire(parent), attribute, size: frame.size, crc32: toBase64(sum) });
    if (aborted) throw Object.assign(new Error('upload cancelled'), { code: 'UPLOAD_CANCELLED' });
    put = api.putObject(granted, frame, onProgress);
    try {
      await put.done;
    } catch (error) {
      // No answer at all: this browser cannot reach the store (a forwarded
      // port, a proxy in front of the page); the server path can be taken.
      if (error?.code === 'NETWORK') error.s3Unreachable = true;
      throw error;
    }
    // Cancelled while the bytes went: nothing is committed (gc removes the object).
    if (aborted) throw Object.assign(new Error('upload cancelled'), { code: 'UPLOAD_CANCELLED' });
    return api.commitObject(table, granted.version);
  })();
  return {
    done,
    abort: () => {
      aborted = true;
      put?.abort();
    },
  };
}

function keyOf(parent) {
  const key = {};
  for (const k of state.table.key) key[k.name] = parent[k.name];
  return itemToWire(key);
}

const startUpload = guarded(async () => {
  if (!state.plan || state.upload) return;
  clearError();
  // A plan already sent, or made long ago, is split again: what the page
  // shows is what goes (the server stamps the version itself).
  if (state.plan.sent || Date.now() - state.plan.createdAt > PLAN_FRESH_MS) makePlan();
  if (!state.plan) return;
  const plan = state.plan;
  const { result } = plan;
  const current = state.current;
  const table = state.table.name;
  const key = keyOf(result.parent);
  const verify = byId('verify');
  verify.dataset.state = 'idle';
  verify.textContent = '';
  byId('preview-box').hidden = true;
  // Straight to S3 when the server offers it and this browser reached it.
  let direct = !state.s3Unreachable && straightToS3(state.table, result, current.attribute);
  const progress = byId('progress');
  const progressText = byId('progress-text');
  const status = byId('upload-status');
  byId('upload').disabled = true;
  byId('cancel').hidden = false;
  document.body.dataset.upload = 'sending';
  const started = performance.now();
  const onProgress = (sent, total) => {
    progress.value = total ? sent / total : 0;
    progressText.textContent = `${shortBytes(sent)} of ${shortBytes(total)}`;
  };
  let body;
  let answer;
  try {
    for (;;) {
      body = direct ? new Blob(result.chunks.map((c) => chunkData(c))) : uploadBody(result.parent, result.chunks);
      progress.value = 0;
      status.textContent = direct ? `Uploading ${bytes(body.size)} straight to S3…` : `Uploading ${bytes(body.size)}…`;
      const request = direct ? uploadToS3(table, result, current.attribute, body, onProgress) : api.upload(table, body, onProgress);
      document.body.dataset.route = direct ? 's3' : 'server';
      state.upload = request;
      try {
        answer = await request.done;
        break;
      } catch (error) {
        if (!(direct && error?.s3Unreachable)) throw error;
        // Nothing was committed; the server path, from now on.
        state.s3Unreachable = true;
        direct = false;
      }
    }
  } catch (error) {
    status.textContent = 'Nothing was stored.';
    document.body.dataset.upload = 'failed';
    if (error?.code === 'VERSION_REUSED') makePlan();
    throw error;
  } finally {
    state.upload = null;
    byId('cancel').hidden = true;
    byId('upload').disabled = !state.plan;
  }
  const sentMs = performance.now() - started;
  progress.value = 1;
  document.body.dataset.upload = 'stored';
  // Some stores report no consumed capacity (0): then the planned figure stands alone.
  const planned = answer.writeUnits ?? result.writeUnits;
  const consumed = answer.consumedWriteUnits ? `, ${count(answer.consumedWriteUnits)} reported consumed` : '';
  status.textContent = `Stored in ${duration(sentMs)}: ${answer.mode} mode, ${bytes(answer.bytesWritten ?? body.size)} written, ${count(planned)} WCU planned${consumed}.`;
  plan.sent = true;
  await refreshItems();

  verify.dataset.state = 'reading';
  verify.textContent = 'Reading it back…';
  const readStarted = performance.now();
  const { same, detail } = await compareStored({ table, key, attribute: current.attribute, expected: current.expected, result, options: tableOptions() });
  const readMs = performance.now() - readStarted;
  if (!same) {
    verify.dataset.state = 'mismatch';
    verify.textContent = `Not verified: ${detail}.`;
    throw new PageError('VERIFY_MISMATCH', `The item read back differs from what was uploaded: ${detail}.`);
  }
  verify.dataset.state = 'verified';
  verify.textContent = `verified — ${detail} (read in ${duration(readMs)}; upload and check took ${duration(performance.now() - started)} in all).`;
  await showPreview(table, key);
});

async function showPreview(table, key) {
  const box = byId('preview-box');
  const meta = byId('preview-meta');
  const pre = byId('preview');
  try {
    const found = await api.preview(table, key, 0, PREVIEW_BYTES);
    const what = found.attribute ? `of “${found.attribute}”` : 'of the stored content';
    meta.textContent = `Bytes 0–${count(found.bytes.length)} ${what}, of ${bytes(found.total)}; ${count(found.chunksRead)} chunk${found.chunksRead === 1 ? '' : 's'} read.`;
    pre.textContent = found.attribute && found.attribute !== 'data' ? new TextDecoder().decode(found.bytes) : previewText(found.bytes);
  } catch (error) {
    meta.textContent = `No preview: ${sentence(error, state.config)}`;
    pre.textContent = '';
  }
  box.hidden = false;
}

// ---------------------------------------------------------------- stored items

async function refreshItems() {
  const status = byId('items-status');
  const items = await api.listItems(state.table.name);
  renderItems(byId('item-rows'), items, { inspect: guarded(showInspect), remove: guarded(removeItem) });
  status.textContent = `${count(items.length)} item${items.length === 1 ? '' : 's'} in ${state.table.name}.`;
}

async function showInspect(key) {
  clearError();
  const report = await api.inspect(state.table.name, key);
  renderInspect(byId('inspect'), { key, ...report });
  byId('inspect').scrollIntoView({ block: 'nearest', behavior: 'smooth' });
}

async function removeItem(key, button) {
  clearError();
  button.disabled = true;
  try {
    const answer = await api.deleteItem(state.table.name, key);
    byId('items-status').textContent = `Deleted ${keyText(key)} and its ${count(answer.chunksDeleted)} chunk${answer.chunksDeleted === 1 ? '' : 's'}.`;
  } finally {
    await refreshItems().catch(showError);
  }
  const inspectBox = byId('inspect');
  if (inspectBox.dataset.key === keyText(key)) inspectBox.hidden = true;
}

// ---------------------------------------------------------------- start

function wire() {
  byId('load-sample').addEventListener('click', loadSample);
  byId('file').addEventListener('change', guarded((event) => useFile(event.target.files[0])));
  const drop = byId('drop');
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener(
    'drop',
    guarded(async (event) => {
      event.preventDefault();
      drop.classList.remove('over');
      await useFile(event.dataTransfer.files[0]);
    }),
  );
  byId('use-paste').addEventListener('click', usePaste);
  byId('codec').addEventListener('change', guarded(async () => {
    if (!state.current) return;
    fill(byId('plan'), h('p', { class: 'muted' }, 'Planning…'));
    await nextFrame();
    makePlan();
  }));
  byId('upload').addEventListener('click', startUpload);
  byId('cancel').addEventListener('click', () => state.upload?.abort());
  byId('refresh').addEventListener('click', guarded(async () => {
    clearError();
    await refreshItems();
  }));
  byId('table').addEventListener('change', guarded(async (event) => {
    state.table = state.config.tables.find((t) => t.name === event.target.value);
    renderKeyFields();
    byId('inspect').hidden = true;
    await refreshItems();
    if (state.source) await analyze();
  }));
}

async function start() {
  // First of all: the key leaves the address bar before anything can fail.
  const hasToken = takeToken() !== null;
  wire();
  sampleSizes();
  placeScale();
  if (!hasToken) throw tokenNeeded();
  const [config] = await Promise.all([
    api.getConfig(),
    init().catch((error) => {
      throw Object.assign(new Error(String(error?.message ?? error)), { code: 'WASM_LOAD' });
    }),
  ]);
  state.config = config;
  if (!config.tables?.length) throw new PageError('NO_TABLES', 'This server allows no tables, so there is nothing to store into.');
  state.table = config.tables[0];
  fill(byId('table'), config.tables.map((t) => h('option', { value: t.name }, t.name)));
  byId('table-field').hidden = config.tables.length < 2;
  renderKeyFields();
  await refreshItems();
  const scope = config.keyPrefix ? `keys starting with “${config.keyPrefix}”` : 'any key';
  byId('server').textContent = `Ready · ${config.tables.map((t) => `${t.name} (chunks in ${t.chunkTable})`).join(', ')} · ${scope} · items up to ${shortBytes(config.maxItemBytes)}`;
  document.body.dataset.state = 'ready';
}

start().catch((error) => {
  document.body.dataset.state = 'failed';
  byId('server').textContent = 'Not connected.';
  showError(error);
});
