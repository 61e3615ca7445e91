// dynaslice/dynamodb: items of any size with @aws-sdk/client-dynamodb in
// one call. Each function runs one of the core's protocol machines (the
// same the Rust host runs: wasm/src/machine.rs over core/src/protocol):
// the machine decides every request, resend, commit and re-read; this
// module converts the caller's values, moves a stream's bytes in and out,
// and reports progress.

import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import init from 'dynaslice';
import { POLICY } from '../dist/policy.js';
import { boundApi } from './api.js';
import { decodeItem } from './decode.js';
import { withTableKeys } from './dynamodb/describe.js';
import { Drive } from './dynamodb/drive.js';
import { loadS3 } from './dynamodb/s3.js';
import { badOption, dynasliceError, flag, format } from './error.js';
import { bytesOf } from './stream.js';

/** The most batch requests in flight at once for one operation (the core's; the pace starts lower and adapts). */
export const DEFAULT_CONCURRENCY = POLICY.concurrency;
/** The core's default retry policy. */
export const DEFAULT_RETRY = Object.freeze({ ...POLICY.retry });
/** gc keeps unreferenced chunks younger than this (the core's default: one hour). */
export const DEFAULT_GRACE_MS = POLICY.graceMs;
/** Chunk requests a read keeps ahead of the chunk it decodes (the core's read window). */
export const DEFAULT_WINDOW = POLICY.readWindow;

/** The key attributes of `item` (its other attributes need not be converted to build a request). */
function keyOf(item, options) {
  if (!Array.isArray(options?.key)) throw badOption('key', 'an array like [{ name: "pk", type: "S" }]');
  if (item === null || typeof item !== 'object') throw dynasliceError('INPUT_INVALID', 'the item must be an object');
  return Object.fromEntries(options.key.filter((k) => Object.hasOwn(item, k?.name)).map(({ name }) => [name, item[name]]));
}

/** The WebAssembly module, and @aws-sdk/client-s3 when the table keeps payloads in S3. */
async function ready(options) {
  await init();
  if (options?.s3 !== undefined) await loadS3();
}

/** The client and signal every call takes, checked. */
function checked(client, options) {
  if (client === null || typeof client !== 'object' || typeof client.send !== 'function') {
    throw dynasliceError('OPTIONS_INVALID', 'client must be a DynamoDBClient (or DynamoDBDocumentClient) from @aws-sdk/client-dynamodb');
  }
  const s3 = options?.s3;
  if (s3 !== undefined && (s3 === null || typeof s3 !== 'object' || typeof s3.client?.send !== 'function')) {
    throw badOption('s3', 'an object like { client: new S3Client(…), bucket: "media" } (an S3Client from @aws-sdk/client-s3)');
  }
  const signal = options?.signal;
  if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean')) throw badOption('signal', 'an AbortSignal');
  signal?.throwIfAborted?.();
  return signal;
}

/**
 * `options.onProgress`, called with `shape(progress)` of the machine's
 * progress whenever it changed; a throwing callback must not break the
 * protocol half-way.
 */
function reporter(options, shape) {
  const onProgress = options?.onProgress;
  if (onProgress !== undefined && typeof onProgress !== 'function') throw badOption('onProgress', 'a function');
  let last;
  return (progress) => {
    if (onProgress === undefined) return;
    const now = shape(progress);
    const text = JSON.stringify(now);
    if (text === last) return;
    last = text;
    try {
      onProgress(now);
    } catch {
      // The caller's display failing is no reason to abandon a write.
    }
  };
}

/** Runs `machine` to its end (a machine that moves no bytes); frees it. */
async function finish(machine, client, signal, progress, s3) {
  try {
    const step = await new Drive(machine, client, signal, s3).run(progress);
    if (step.kind !== 'done') throw dynasliceError('INTERNAL', `a protocol machine asked for ${step.kind}`);
    return step.result;
  } finally {
    machine.free();
  }
}

/** A write's result, as the driver returns it. */
function putResult(result, bytesWritten = result.bytesWritten) {
  const { mode, version, manifest, replaced, superseded, writeUnits, consumed, cleanupLeft } = result;
  return { mode, version, manifest, replaced, superseded, bytesWritten, writeUnits, consumed, cleanupLeft };
}

/**
 * Writes `item` (DynamoDB JSON, or plain values with `format: 'plain'`):
 * reads the stored parent, splits the item, writes the chunks and commits
 * the parent. By default the last writer wins, as with PutItem, and the
 * replaced version's chunks are deleted. With `expect` the commit is
 * conditional on the parent read: a stored item that fails it, or a
 * concurrent writer that committed first, makes this throw CONFLICT, with
 * this write's chunks deleted.
 */
export async function putItem(client, item, options) {
  const signal = checked(client, options);
  const progress = reporter(options, (p) => ({ bytesWritten: p.bytesDone, totalBytes: p.bytesTotal, chunksWritten: p.chunksDone, chunks: p.chunksTotal }));
  await ready(options);
  const machine = boundApi().machines.put(item, await withTableKeys(client, options));
  return putResult(await finish(machine, client, signal, progress, options?.s3?.client));
}

/**
 * Writes every item `items` yields (an array, an iterable or an async
 * iterable, read as the writes go: memory holds `inFlight` items), each by
 * putItem, `inFlight` at once (default 8), so the chunk writes of items
 * under different partition keys interleave and each adapts to throttling.
 * An item that cannot be stored is reported in `failed` (its index in
 * `items`, code and message) and the rest go in. Resolves to `{ written,
 * failed, bytesWritten, consumed }`; `onProgress({ written, failed })`
 * hears each item as it ends. An abort rejects with its reason.
 */
export async function putItems(client, items, options) {
  const signal = checked(client, options);
  const inFlight = options?.inFlight ?? 8;
  if (!Number.isInteger(inFlight) || inFlight < 1) throw badOption('inFlight', 'a positive integer');
  const source = items?.[Symbol.asyncIterator]?.() ?? items?.[Symbol.iterator]?.();
  if (source === undefined || typeof source.next !== 'function') {
    throw dynasliceError('INPUT_INVALID', 'items must be an array, an iterable or an async iterable of items');
  }
  const progress = reporter(options, (p) => p);
  const { onProgress, inFlight: _, ...each } = options ?? {};
  const result = { written: 0, failed: [], bytesWritten: 0, consumed: { readUnits: 0, writeUnits: 0 } };
  let index = 0;
  let ended = false;
  const worker = async () => {
    while (!ended) {
      // An async generator answers next() calls in the order they were made.
      const step = await source.next();
      if (step.done) {
        ended = true;
        return;
      }
      const at = index++;
      try {
        const put = await putItem(client, step.value, each);
        result.written += 1;
        result.bytesWritten += put.bytesWritten;
        result.consumed.readUnits += put.consumed.readUnits;
        result.consumed.writeUnits += put.consumed.writeUnits;
      } catch (error) {
        if (signal?.aborted) throw error;
        result.failed.push({ index: at, code: error?.code ?? 'INTERNAL', message: String(error?.message ?? error) });
      }
      progress({ written: result.written, failed: result.failed.length });
    }
  };
  try {
    await Promise.all(Array.from({ length: inFlight }, worker));
  } finally {
    if (ended === false) await source.return?.();
  }
  result.failed.sort((a, b) => a.index - b.index);
  return result;
}

/**
 * Writes `source` (a Blob, a ReadableStream or a Node stream) as the
 * binary attribute `options.attribute` of `item`, chunk by chunk as it is
 * read: memory stays within a few chunks whatever its size. Then commits
 * as putItem does. A source that fails (or yields other than bytes) ends
 * the write with its error, after this write's chunks were deleted.
 */
export async function putStream(client, source, item, options) {
  const signal = checked(client, options);
  const size = options?.size ?? source?.size;
  let bytesRead = 0;
  const progress = reporter(options, (p) => ({ bytesRead, totalBytes: size, chunksWritten: p.chunksDone, chunks: p.chunksTotal }));
  await ready(options);
  const machine = boundApi().machines.putStream(item, { ...(await withTableKeys(client, options)), size });
  const drive = new Drive(machine, client, signal, options?.s3?.client);
  let pieces;
  try {
    pieces = bytesOf(source);
    for (;;) {
      const step = await drive.run(progress);
      if (step.kind === 'done') return putResult(step.result, step.result.payloadBytes);
      if (step.kind !== 'input') throw dynasliceError('INTERNAL', `a write asked for ${step.kind}`);
      let next;
      try {
        next = await pieces.next();
      } catch (error) {
        // Nothing refers to this write's chunks yet: they go first.
        await drive.stop();
        throw error;
      }
      if (next.done) {
        machine.endInput();
      } else {
        bytesRead += next.value.length;
        machine.input(next.value);
      }
    }
  } finally {
    machine.free();
    await pieces?.return?.();
  }
}

/**
 * Reads the item with `key`; `item` is undefined when there is none. A
 * chunk that vanished means a concurrent overwrite replaced the version
 * being read: the parent is read again (up to 5 times).
 */
export async function getItem(client, key, options) {
  const signal = checked(client, options);
  const progress = reporter(options, (p) => ({ chunksRead: p.chunksDone, chunks: p.chunksTotal }));
  const output = { plain: format(options) === 'plain', wrapNumbers: flag(options, 'wrapNumbers', false) };
  await ready(options);
  const machine = boundApi().machines.get(keyOf(key, options), await withTableKeys(client, options));
  const result = await finish(machine, client, signal, progress, options?.s3?.client);
  const item = result.item === undefined ? undefined : decodeItem(result.item, output);
  return { item, version: result.version, chunksRead: result.chunksRead, parentReads: result.parentReads, consumed: result.consumed };
}

/**
 * The bytes of one string or binary attribute of the stored item with
 * `key` (`options.attribute`), as a ReadableStream that yields them as the
 * chunks arrive: at most `window` chunk requests (default DEFAULT_WINDOW)
 * ahead, and each chunk's digest checked before any of its bytes are
 * yielded. A damaged chunk errors the stream (`CHUNK_DIGEST_MISMATCH`, …);
 * so does the whole payload's digest, checked after the last byte.
 * Resolves once the parent is read: `NOT_FOUND` when no item has the key,
 * `ATTRIBUTE_NOT_FOUND` when it has no such attribute.
 */
export async function getStream(client, key, options) {
  checked(client, options);
  // The stream's own signal: the caller's, or the stream's cancel.
  const cancel = new AbortController();
  const signals = [cancel.signal, options?.signal].filter(Boolean);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  await ready(options);
  const machine = boundApi().machines.getStream(keyOf(key, options), await withTableKeys(client, options));
  const drive = new Drive(machine, client, signal, options?.s3?.client);
  let bytesRead = 0;
  const progress = reporter(options, (p) => ({ bytesRead, totalBytes: machine.size, chunksRead: p.chunksDone, chunks: p.chunksTotal }));
  let freed = false;
  const free = () => {
    if (!freed) machine.free();
    freed = true;
  };
  // The parent read: past it the machine first offers output (or ends: no item).
  let pending;
  try {
    pending = await drive.run(progress);
  } catch (error) {
    free();
    throw error;
  }
  if (pending.kind === 'done') {
    free();
    throw dynasliceError('NOT_FOUND', `no item has the key ${keyText(key, options)}`);
  }
  return new ReadableStream(
    {
      async pull(controller) {
        try {
          for (;;) {
            const step = pending ?? (await drive.run(progress));
            pending = undefined;
            if (step.kind === 'done') {
              free();
              controller.close();
              return;
            }
            if (step.kind !== 'output') throw dynasliceError('INTERNAL', `a read asked for ${step.kind}`);
            const piece = machine.output();
            if (piece.length > 0) {
              bytesRead += piece.length;
              progress(machine.progress());
              controller.enqueue(piece);
              return;
            }
          }
        } catch (error) {
          cancel.abort(new DOMException('the stream failed', 'AbortError'));
          free();
          controller.error(error);
        }
      },
      cancel() {
        cancel.abort(new DOMException('the stream was cancelled', 'AbortError'));
        free();
      },
    },
    { highWaterMark: 0 },
  );
}

/** The table's key text, as the host prints it (`pk=a sk=b`), for messages. */
function keyText(key, options) {
  return options.key
    .map(({ name }) => {
      const value = key?.[name];
      const shown = value !== null && typeof value === 'object' ? (value.S ?? value.N ?? (value.B ? 'binary' : JSON.stringify(value))) : String(value);
      return `${name}=${shown}`;
    })
    .join(' ');
}

/**
 * Sets and removes top-level attributes of the item with `key`, as
 * UpdateItem does (an absent item is created): `changes` is `{ set, remove
 * }`, `set` the attributes to add or replace (as putItem takes items),
 * `remove` their names. Attributes on the parent change with one
 * UpdateItem conditional on the stored version, no chunk touched; a change
 * to the payload, to the TTL of an item with chunks, or one that no longer
 * fits the parent rewrites the item as a new version, reusing the chunks of
 * every group (a large attribute stored as a frame of its own) it does not
 * change (`reused` names their attributes). A concurrent
 * overwrite makes this throw CONFLICT and leaves the other writer's item
 * whole. With `dryRun`, only the plan and its cost are returned.
 */
export async function updateItem(client, key, changes, options) {
  const signal = checked(client, options);
  if (changes === null || typeof changes !== 'object') throw dynasliceError('INPUT_INVALID', 'changes must be an object like { set: { status: { S: "done" } }, remove: ["draft"] }');
  const { set = {}, remove = [] } = changes;
  if (set === null || typeof set !== 'object' || Array.isArray(set)) throw dynasliceError('INPUT_INVALID', 'changes.set must be an object of attributes');
  if (!Array.isArray(remove) || !remove.every((name) => typeof name === 'string')) {
    throw dynasliceError('INPUT_INVALID', 'changes.remove must be an array of attribute names');
  }
  const progress = reporter(options, (p) => ({ bytesWritten: p.bytesDone, totalBytes: p.bytesTotal, chunksWritten: p.chunksDone, chunks: p.chunksTotal }));
  await ready(options);
  const tableOptions = await withTableKeys(client, options);
  const machine = boundApi().machines.update(keyOf(key, options), set, remove, tableOptions);
  const { path, reason, applied, writeUnits, reused, put, consumed } = await finish(machine, client, signal, progress, options?.s3?.client);
  return { path, reason, applied, writeUnits, reused, put: put && putResult(put), consumed };
}

/**
 * The versions of the item with `key` (undefined when there is none): `{
 * retention, versions }`, the current version first, then those its
 * history keeps (putItem's `history: { keep, maxAgeMs }`), newest first,
 * each `{ version, current, writtenAt, replacedAt, bytes, chunks, note }`
 * (times in ms since the epoch). One consistent GetItem.
 */
export async function listVersions(client, key, options) {
  const signal = checked(client, options);
  await ready(options);
  const tableOptions = await withTableKeys(client, options);
  const request = boundApi().parentRequest(keyOf(key, options), tableOptions);
  const { Item } = await client.send(new GetItemCommand(request), { abortSignal: signal });
  return Item === undefined ? undefined : boundApi().machines.versions(Item, Date.now());
}

/**
 * Makes the kept version `version` of the item with `key` current again:
 * reads it whole (getItem with `version`, every digest checked) and writes
 * it as a new version (putItem; its `note`, unless given, says what was
 * restored). The version it replaces is kept as the item's history says.
 * VERSION_NOT_FOUND when the item keeps no such version.
 */
export async function restoreVersion(client, key, version, options) {
  // Plain numbers come back as NumberValue: exact, whatever their size.
  const { item } = await getItem(client, key, { ...options, version, wrapNumbers: true });
  if (item === undefined) throw dynasliceError('VERSION_NOT_FOUND', `the item keeps no version ${version}`);
  const note = options?.note ?? `restored ${version}`;
  return putItem(client, item, { ...options, note });
}

/**
 * Deletes the item with `key` and its chunks: the parent first (on the
 * condition that it is still the version read), then the chunks.
 */
export async function deleteItem(client, key, options) {
  const signal = checked(client, options);
  await ready(options);
  const machine = boundApi().machines.delete(keyOf(key, options), options);
  return finish(machine, client, signal, undefined, options?.s3?.client);
}

/**
 * Whole items from the caller's own Query (a `QueryCommand` input: index,
 * key condition, filter, names, values, order, `ExclusiveStartKey`), or a
 * Scan when it has no `KeyConditionExpression`: an async iterable that
 * yields each item in the pages' order, every virtual item read whole
 * (its parent read again, consistently, and every digest checked;
 * `itemConcurrency` at once, default 4), plain items as the page gave
 * them, and the chunk items an item collection holds never. With `lazy:
 * true` the parents of virtual items come as stored (with `_ds`), for the
 * caller to getItem the ones it wants. An index must project `_ds` (ALL,
 * or INCLUDE `_ds`) for its virtual items to be read whole. The iterator's
 * return value is the summary `{ items, virtualItems, chunksSkipped,
 * vanished, pages, consumed }`; breaking out of the loop stops the query.
 */
export async function* queryItems(client, input, options) {
  const signal = checked(client, options);
  if (input === null || typeof input !== 'object') throw dynasliceError('INPUT_INVALID', 'input must be a QueryCommand or ScanCommand input object');
  const output = { plain: format(options) === 'plain', wrapNumbers: flag(options, 'wrapNumbers', false) };
  await ready(options);
  const tableOptions = await withTableKeys(client, options);
  const machine = boundApi().machines.query({ TableName: options?.table, ...input }, tableOptions);
  const drive = new Drive(machine, client, signal, options?.s3?.client);
  let ended = false;
  try {
    for (;;) {
      const step = await drive.run();
      if (step.kind === 'done') {
        ended = true;
        return step.result;
      }
      if (step.kind !== 'output') throw dynasliceError('INTERNAL', `a query asked for ${step.kind}`);
      for (const stream of machine.items()) yield decodeItem(stream, output);
    }
  } finally {
    if (!ended) await drive.stop();
    machine.free();
  }
}

/**
 * Reads every item of the table whole and checks every chunk's digest and
 * each whole item's, in `segments` Scan segments at once (default 1), at
 * most `maxUnitsPerSecond` units per second on average (shared by the
 * segments): `{ items, virtualItems, damaged: [{ key, code, message }],
 * vanished, chunksSkipped, consumed }`, where `damaged` lists each item
 * that does not read back (a changed byte, a missing chunk, a chunk of
 * another version, an unreadable manifest). Memory: `itemConcurrency`
 * items per segment. `onProgress({ items, damaged })` after each page.
 */
export async function verify(client, options) {
  const signal = checked(client, options);
  const segments = options?.segments ?? 1;
  if (!Number.isInteger(segments) || segments < 1 || segments > 1000) throw badOption('segments', 'an integer from 1 to 1000');
  const output = { plain: format(options) === 'plain', wrapNumbers: flag(options, 'wrapNumbers', false) };
  const progress = reporter(options, (p) => p);
  await ready(options);
  const tableOptions = await withTableKeys(client, options);
  const damaged = [];
  const seen = Array.from({ length: segments }, () => 0);
  const one = async (segment) => {
    const each = { ...tableOptions, segment: segments > 1 ? [segment, segments] : undefined };
    const machine = boundApi().machines.verify(each);
    const drive = new Drive(machine, client, signal, options?.s3?.client);
    let ended = false;
    try {
      for (;;) {
        const step = await drive.run();
        if (step.kind === 'done') {
          ended = true;
          return step.result;
        }
        if (step.kind !== 'output') throw dynasliceError('INTERNAL', `verify asked for ${step.kind}`);
        const checked = machine.checked();
        const found = checked.damaged.map((d) => ({ key: decodeItem(d.key, output), code: d.code, message: d.message }));
        damaged.push(...found);
        seen[segment] += checked.items + found.length;
        progress({ items: seen.reduce((a, b) => a + b, 0), damaged: damaged.length });
      }
    } finally {
      if (!ended) await drive.stop();
      machine.free();
    }
  };
  const outcomes = await Promise.all(Array.from({ length: segments }, (_, i) => one(i)));
  const sum = (name) => outcomes.reduce((a, o) => a + o[name], 0);
  return {
    items: sum('items') + damaged.length,
    virtualItems: sum('virtualItems') + damaged.length,
    damaged,
    vanished: sum('vanished'),
    chunksSkipped: sum('chunksSkipped'),
    consumed: { readUnits: outcomes.reduce((a, o) => a + o.consumed.readUnits, 0), writeUnits: 0 },
  };
}

/**
 * Deletes chunks no parent references once they are older than
 * `graceMs` (default one hour), judged by the store's clock, a page of
 * the chunk table at a time. A parent whose manifest cannot be read keeps
 * every chunk of its key.
 */
export async function gc(client, options) {
  const signal = checked(client, options);
  const segments = options?.segments ?? 1;
  if (!Number.isInteger(segments) || segments < 1 || segments > 1000) throw badOption('segments', 'an integer from 1 to 1000');
  const progress = reporter(options, (p) => p);
  await ready(options);
  const seen = Array.from({ length: segments }, () => ({ chunks: 0, deleted: 0 }));
  const one = async (segment) => {
    // The core gives each segment its share of maxUnitsPerSecond.
    const each = { ...options, segment: segments > 1 ? [segment, segments] : undefined };
    const machine = boundApi().machines.gc(each);
    try {
      const drive = new Drive(machine, client, signal, options?.s3?.client);
      const total = () => seen.reduce((a, b) => ({ chunks: a.chunks + b.chunks, deleted: a.deleted + b.deleted }));
      for (;;) {
        const step = await drive.run();
        if (step.kind === 'done') {
          seen[segment] = { chunks: step.result.chunks, deleted: step.result.deleted };
          progress(total());
          return step.result;
        }
        if (step.kind !== 'output') throw dynasliceError('INTERNAL', `gc asked for ${step.kind}`);
        // A page is done: its counts so far.
        seen[segment] = machine.gcProgress();
        progress(total());
      }
    } finally {
      machine.free();
    }
  };
  const reports = await Promise.all(Array.from({ length: segments }, (_, i) => one(i)));
  return reports.reduce((a, b) => ({
    ...a,
    chunks: a.chunks + b.chunks,
    referenced: a.referenced + b.referenced,
    kept: a.kept + b.kept,
    young: a.young + b.young,
    deleted: a.deleted + b.deleted,
    unreadable: a.unreadable + b.unreadable,
    unreadableParents: [...a.unreadableParents, ...b.unreadableParents],
    consumed: { readUnits: a.consumed.readUnits + b.consumed.readUnits, writeUnits: a.consumed.writeUnits + b.consumed.writeUnits },
  }));
}

/**
 * Deletes the S3 objects of a table that keeps large payloads in S3 (the
 * `s3` option) that no parent refers to, once older than `graceMs`
 * (default one hour) by S3's clock (each listing answer's `Date` against
 * the object's `LastModified`), and aborts multipart uploads under the
 * prefix older than that. Never touches a key under the prefix that names
 * no item and version, nor an object whose parent's manifest cannot be
 * read. Resolves to `{ objects, referenced, kept, young, deleted,
 * unreadable, foreign, uploadsAborted, uploadsYoung, uploadsListed,
 * dryRun, consumed }`.
 */
export async function gcObjects(client, options) {
  const signal = checked(client, options);
  if (options?.s3 === undefined) throw badOption('s3', 'given: gcObjects collects the objects of a table that keeps payloads in S3');
  await ready(options);
  const machine = boundApi().machines.gcObjects(await withTableKeys(client, options));
  return finish(machine, client, signal, undefined, options.s3.client);
}
