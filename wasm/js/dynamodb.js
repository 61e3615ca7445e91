// dynaslice/dynamodb: items of any size with @aws-sdk/client-dynamodb in
// one call. The core plans every request (js/api.js); this module sends
// them with the commit protocol of the Rust host (host/src/put.rs, get.rs,
// delete.rs, gc.rs), through sender.js's retries.

import init, { carriesVersion, deleteRequests, parentRequest, readRequests, reassemble, split, splitStream } from 'dynaslice';
import { boundApi } from './api.js';
import { badOption, dynasliceError, flag } from './error.js';
import { DEFAULT_CONCURRENCY, DEFAULT_RETRY, Sender } from './dynamodb/sender.js';

export { DEFAULT_CONCURRENCY, DEFAULT_RETRY };

/** gc keeps unreferenced chunks younger than this (the host's default: 1 hour). */
export const DEFAULT_GRACE_MS = 3600 * 1000;

/** Times getItem re-reads the parent when chunks vanished under an overwrite (the host's max_rereads). */
const MAX_REREADS = 5;

/** The key attributes of `item` (its other attributes need not be converted to build a request). */
function keyOf(item, options) {
  if (!Array.isArray(options?.key)) throw badOption('key', 'an array like [{ name: "pk", type: "S" }]');
  if (item === null || typeof item !== 'object') throw dynasliceError('INPUT_INVALID', 'the item must be an object');
  return Object.fromEntries(options.key.filter((k) => Object.hasOwn(item, k?.name)).map(({ name }) => [name, item[name]]));
}

/** The table's key text, as the host prints it (`pk=a sk=b`), for messages. */
function keyText(key, options) {
  return options.key
    .map(({ name }) => {
      const value = key[name];
      const shown = value !== null && typeof value === 'object' ? (value.S ?? value.N ?? (value.B ? 'binary' : JSON.stringify(value))) : String(value);
      return `${name}=${shown}`;
    })
    .join(' ');
}

function conflict(key, options) {
  return dynasliceError('CONFLICT', `another writer changed ${keyText(key, options)} first; nothing of this write was kept`);
}

/** The exact bytes of the items a split's requests write, request by request. */
function requestBytes(result) {
  return result.capacity.map((request) => request.items.reduce((sum, item) => sum + item.bytes, 0));
}

/** Calls `onProgress` safely: a throwing callback must not break the protocol half-way. */
function reporter(options) {
  const onProgress = options?.onProgress;
  if (onProgress !== undefined && typeof onProgress !== 'function') throw badOption('onProgress', 'a function');
  return (progress) => {
    try {
      onProgress?.(progress);
    } catch {
      // The caller's display failing is no reason to abandon a write.
    }
  };
}

/** The capacity the answers reported, summed. */
function consumedOf(sender) {
  return { readUnits: sender.consumed.readUnits, writeUnits: sender.consumed.writeUnits };
}

/** Times an atomic write under last writer wins re-plans after a concurrent commit (the host's MAX_REPLANS). */
const MAX_REPLANS = 8;

/**
 * What `expect` asks of the stored parent: nothing (last writer wins),
 * `'absent'`, or `{ version }`. Throws CONFLICT when the stored item
 * already fails it.
 */
function checkExpect(stored, options, key) {
  const expect = options.expect;
  if (expect === undefined) return;
  if (expect === 'absent') {
    if (stored !== undefined) throw conflict(key, options);
    return;
  }
  if (expect !== null && typeof expect === 'object' && typeof expect.version === 'string') {
    if (stored === undefined || !carriesVersion(stored, expect.version)) throw conflict(key, options);
    return;
  }
  throw badOption('expect', '"absent" or { version: "<26-character version id>" }');
}

/** The core's commit policy for a write: last writer wins unless `expect` asks for optimistic locking. */
function commitOf(options) {
  return options?.expect === undefined ? 'overwrite' : 'conditional';
}

/** True when the stored parent is this write's (its version; an unsplit item: equal to it). */
function isOurs(stored, result) {
  if (stored === undefined) return false;
  if (result.manifest) return carriesVersion(stored, result.manifest.version);
  return sameItem(stored, result.parent);
}

/** Reads the parent again: is it this write's? */
async function committed(sender, options, result) {
  return isOurs(await readParent(sender, keyOf(result.parent, options), { ...options, format: 'dynamodb' }), result);
}

/** DynamoDB JSON equality, sets compared as sets (the store may reorder them). */
function sameItem(a, b) {
  const canonical = (value) => {
    if (value instanceof Uint8Array) return { bytes: Array.from(value) };
    if (Array.isArray(value)) return value.map(canonical);
    if (value === null || typeof value !== 'object') return value;
    const out = {};
    for (const name of Object.keys(value).sort()) {
      const inner = canonical(value[name]);
      out[name] = ['SS', 'NS', 'BS'].includes(name) ? inner.map((v) => JSON.stringify(v)).sort() : inner;
    }
    return out;
  };
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** Sends deletes after the commit; resolves to how many failed (left to gc). Never throws. */
async function cleanUp(sender, batches) {
  let left = 0;
  for (const batch of batches ?? []) {
    try {
      await sender.batchWrite(batch);
    } catch {
      for (const requests of Object.values(batch.RequestItems)) left += requests.length;
    }
  }
  return left;
}

/** Deletes a lost write's chunks, best effort, even when the caller's signal fired. */
async function abandon(sender, abort) {
  const quiet = new Sender(sender.client, { retry: sender.retry, concurrency: sender.concurrency });
  await quiet.batchWrites(abort ?? []).catch(() => {});
}

/**
 * What a commit did: `replaced` (an item was replaced, as far as known),
 * `cleanup` (deletes of the replaced version's chunks) and `superseded`.
 */
const expected = (stored, cleanup) => ({ replaced: stored !== undefined, cleanup, superseded: false });
/** This write's parent is stored, but what it replaced is unknown: the replaced version's chunks are left to gc. */
const unknown = (stored) => ({ replaced: stored !== undefined, cleanup: [], superseded: false });

/** What an unconditional commit replaced, from the old parent its answer returned. */
function fromOld(old, result, options) {
  const { cleanup } = boundApi().driver.replacedBy(old, result.parent, { ...options, format: 'dynamodb' });
  return { replaced: old !== undefined, cleanup, superseded: false };
}

/**
 * Runs a split's requests: one PutItem, one transaction, or chunk batches
 * then the commit (see `commit`). Resolves to `{ result, committed,
 * cleanupLeft }`; `result` is the one committed (an atomic write under last
 * writer wins may have been planned again by `replan`).
 */
async function execute(sender, options, result, progress, stored, replan) {
  const { requests } = result;
  const key = keyOf(result.parent, options);
  const bytes = requestBytes(result);
  const totalBytes = bytes.reduce((a, b) => a + b, 0);
  const chunks = result.chunks.length;
  let bytesWritten = 0;
  let chunksWritten = 0;
  progress({ bytesWritten, totalBytes, chunksWritten, chunks });
  let done;
  if (requests.putItem) {
    done = await commitSingle(sender, options, result, key, stored);
  } else if (requests.transactWriteItems) {
    ({ result, done } = await commitAtomic(sender, options, result, key, stored, replan));
  } else {
    try {
      const batches = requests.batchWriteItems ?? [];
      // The split's capacity lists the batches first, in order.
      await sender.batchWrites(batches, (batch) => {
        const index = batches.indexOf(batch);
        bytesWritten += bytes[index];
        chunksWritten += result.capacity[index].items.length;
        progress({ bytesWritten, totalBytes, chunksWritten, chunks });
      });
    } catch (error) {
      // Nothing refers to these chunks yet.
      await abandon(sender, requests.abort);
      throw error;
    }
    done = await commit(sender, options, result, key, stored);
  }
  progress({ bytesWritten: totalBytes, totalBytes, chunksWritten: chunks, chunks });
  return { result, committed: done, cleanupLeft: await cleanUp(sender, done.cleanup) };
}

/**
 * One PutItem. Last writer wins: unconditional (`ReturnValues: 'ALL_OLD'`),
 * resent on any transient failure (the item carries no chunks of its own,
 * so a late copy tears nothing); its answer names what it replaced.
 * Optimistic locking: conditional, a lost race is CONFLICT.
 */
async function commitSingle(sender, options, result, key, stored) {
  const put = result.requests.putItem;
  if (put.ReturnValues === 'ALL_OLD') {
    const sent = await sender.putReturningOld(put, 'transient');
    if (!sent.error) return fromOld(sent.old, result, options);
    if (await committed(sender, options, result).catch(() => false)) return unknown(stored);
    throw sent.error;
  }
  if (!(await sender.put(put)) && !(await committed(sender, options, result))) throw conflict(key, options);
  return expected(stored, result.requests.cleanup);
}

/**
 * One TransactWriteItems, conditional on the parent read before the write
 * (a transaction returns nothing). When another writer committed in
 * between, the failed transaction wrote nothing: last writer wins plans
 * again against the parent stored now (`replan(stored)`) and sends it
 * under a new token (a token reused with other content is refused), after
 * a pause with jitter, up to MAX_REPLANS rounds; optimistic locking is
 * CONFLICT.
 */
async function commitAtomic(sender, options, result, key, stored, replan) {
  const base = result.manifest?.version ?? boundApi().driver.versionAt(sender.clock.nowMs());
  for (let round = 1; round <= MAX_REPLANS; round++) {
    const token = round === 1 ? base : `${base}-${round}`;
    if (await sender.transact(result.requests.transactWriteItems, token)) return { result, done: expected(stored, result.requests.cleanup) };
    const now = await readParent(sender, keyOf(result.parent, options), { ...options, format: 'dynamodb' });
    // This round's transaction was applied unseen: it replaced what it expected.
    if (isOurs(now, result)) return { result, done: expected(stored, result.requests.cleanup) };
    if (commitOf(options) !== 'overwrite' || round === MAX_REPLANS) break;
    // A pause with jitter, so writers racing on one key stop colliding.
    await new Promise((resolve) => setTimeout(resolve, sender.backoff(round - 1)));
    sender.checkAborted();
    stored = await readParent(sender, keyOf(result.parent, options), { ...options, format: 'dynamodb' });
    result = replan(stored);
  }
  throw conflict(key, options);
}

/**
 * The commit point of a batch write, its chunks written.
 *
 * Last writer wins: `requests.overwrite`, unconditional, resent only
 * after throttling; its answer returns the replaced parent, whose chunks
 * are deleted. After an ambiguous failure it is never sent again (a late
 * copy could land after a later writer deleted this write's chunks, and
 * point the parent at them): `requests.commit`, pinned to the parent read
 * before the write, goes instead. If its condition fails and the stored
 * parent is not this write's, a concurrent writer committed after this
 * one: this write's chunks are deleted and it succeeds, `superseded`.
 *
 * Optimistic locking: `requests.commit` alone; a failed condition is a
 * lost race (CONFLICT, this write's chunks deleted) unless the stored
 * parent carries this write's version (an earlier attempt of the commit
 * was applied unseen).
 *
 * A commit whose outcome stays unknown is never aborted (it may still be
 * applied); its chunks are left to gc.
 */
async function commit(sender, options, result, key, stored) {
  const { overwrite, cleanup } = result.requests;
  if (overwrite) {
    const sent = await sender.putReturningOld(overwrite, 'unapplied');
    if (!sent.error) return fromOld(sent.old, result, options);
    if (!sent.maybeApplied) {
      await abandon(sender, result.requests.abort);
      throw sent.error;
    }
    sender.checkAborted();
  }
  // This write's parent found stored after the pinned commit failed: under
  // last writer wins the unconditional attempt may be what applied.
  const ours = () => (overwrite ? unknown(stored) : expected(stored, cleanup));
  let written;
  try {
    written = await sender.put(result.requests.commit);
  } catch (error) {
    if (await committed(sender, options, result).catch(() => false)) return ours();
    throw error;
  }
  if (written) return expected(stored, cleanup);
  if (await committed(sender, options, result)) return ours();
  await abandon(sender, result.requests.abort);
  if (overwrite) return { replaced: true, cleanup: [], superseded: true };
  throw conflict(key, options);
}

/**
 * What a write starts with: its sender and progress reporter, the stored
 * parent (read consistently, which also tells the store's time), checked
 * against `expect`, and a version id stamped in the store's time.
 */
async function begin(client, item, options) {
  await init();
  const sender = new Sender(client, options);
  const progress = reporter(options);
  const key = keyOf(item, options);
  const stored = await readParent(sender, key, options);
  checkExpect(stored, options, key);
  const version = boundApi().driver.versionAt(sender.clock.nowMs());
  return { sender, progress, key, stored, version };
}

/** A write's result. */
function outcome(result, { sender }, { committed: done, cleanupLeft }, bytesWritten) {
  return {
    mode: result.requests.mode,
    version: result.manifest?.version,
    manifest: result.manifest,
    replaced: done.replaced,
    superseded: done.superseded,
    bytesWritten,
    writeUnits: result.writeUnits,
    consumed: consumedOf(sender),
    cleanupLeft,
  };
}

/** The parent stored under `key` now, read consistently (learning the store's time). */
function readParent(sender, key, options) {
  return sender.get(parentRequest(key, options));
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
  const write = await begin(client, item, options);
  // The mode when the caller names none is split's: batch.
  const plan = (stored) => split(item, { ...options, version: write.version, expect: stored ?? 'absent', commit: commitOf(options) });
  const result = plan(write.stored);
  const done = await execute(write.sender, options, result, write.progress, write.stored, plan);
  return outcome(done.result, write, done, requestBytes(done.result).reduce((a, b) => a + b, 0));
}

/**
 * Writes `source` (a Blob, a ReadableStream or a Node stream) as the
 * binary attribute `options.attribute` of `item`, chunk by chunk as it is
 * read: memory stays within a few chunks whatever its size. Then commits
 * as putItem does.
 */
export async function putStream(client, source, item, options) {
  const write = await begin(client, item, options);
  const { sender, progress, key, stored, version } = write;
  const pending = new Set();
  const written = [];
  let bytesRead = 0;
  let failed;
  // Chunks are written as they come, as many requests in flight as the pace allows.
  const table = chunkTable(options);
  const send = (chunk) => {
    const write = sender
      .batchWrite({ RequestItems: { [table]: [{ PutRequest: { Item: chunk } }] } })
      .then(() => written.push(chunk), (error) => (failed ??= error))
      .finally(() => pending.delete(write));
    pending.add(write);
  };
  let result;
  try {
    result = await splitStream(source, item, {
      ...options,
      version,
      expect: stored ?? 'absent',
      commit: commitOf(options),
      async onChunk(chunk) {
        if (failed) throw failed;
        send(chunk);
        while (pending.size >= sender.pace.limit) await Promise.race(pending);
        if (failed) throw failed;
      },
      onProgress(p) {
        bytesRead = p.bytesRead;
        progress({ bytesRead, totalBytes: p.totalBytes, chunksWritten: written.length, chunks: p.chunks });
      },
    });
    await Promise.all(pending);
    if (failed) throw failed;
  } catch (error) {
    await Promise.allSettled(pending);
    // Delete what was written: nothing refers to it yet.
    if (written.length > 0) await abandon(sender, boundApi().driver.chunkDeletes(written.map((c) => chunkKeyOf(c, options)), options));
    throw error;
  }
  const done = await commit(sender, options, result, key, stored);
  return outcome(result, write, { committed: done, cleanupLeft: await cleanUp(sender, done.cleanup) }, bytesRead);
}

/** The table chunks go to, as the core names it. */
function chunkTable(options) {
  return boundApi().driver.gcScan(options).TableName;
}

/** A chunk item's key (the chunk less its data), as the core reads it. */
function chunkKeyOf(chunk, options) {
  return boundApi().driver.chunkOf(chunk, options).key;
}

/**
 * Reads the item with `key`; `item` is undefined when there is none. A
 * chunk that vanished means a concurrent overwrite replaced the version
 * being read: the parent is read again (up to 5 times).
 */
export async function getItem(client, key, options) {
  await init();
  const sender = new Sender(client, options);
  const progress = reporter(options);
  const plainKey = keyOf(key, options);
  for (let parentReads = 1; ; parentReads++) {
    const parent = await readParent(sender, plainKey, options);
    if (parent === undefined) return { item: undefined, chunksRead: 0, parentReads, consumed: consumedOf(sender) };
    const { batchGetItems, version } = readRequests(parent, options);
    const chunks = batchGetItems.reduce((n, b) => n + Object.values(b.RequestItems).reduce((m, r) => m + r.Keys.length, 0), 0);
    let chunksRead = 0;
    progress({ chunksRead, chunks });
    const items = await sender.batchGets(batchGetItems, (found) => {
      chunksRead += found.length;
      progress({ chunksRead, chunks });
    });
    try {
      const item = reassemble(parent, items, options);
      return { item, version, chunksRead: items.length, parentReads, consumed: consumedOf(sender) };
    } catch (error) {
      if (error?.code !== 'CHUNK_MISSING') throw error;
      if (parentReads > MAX_REREADS) {
        throw dynasliceError('CHUNKS_VANISHED', `chunks of ${keyText(parentRequest(plainKey, options).Key, options)} stayed missing after ${parentReads} reads of its parent: the store lost them`);
      }
      // Deleted under us by an overwrite's cleanup? Only if the parent moved on.
      const now = await readParent(sender, plainKey, options);
      if (now !== undefined && carriesVersion(now, version)) throw error;
    }
  }
}

/** Chunks getStream fetches ahead of the one being read, by default. */
export const DEFAULT_WINDOW = 4;

/**
 * The bytes of one string or binary attribute of the stored item with
 * `key` (`options.attribute`), as a ReadableStream that yields them as the
 * chunks arrive: at most `window` chunks (default 4) are fetched ahead, and
 * each chunk's digest is checked before any of its bytes are yielded. A
 * damaged chunk errors the stream (`CHUNK_DIGEST_MISMATCH`, …); so does the
 * whole payload's digest, checked after the last byte. Resolves once the
 * parent is read: `NOT_FOUND` when no item has the key, `ATTRIBUTE_NOT_FOUND`
 * when it has no such attribute.
 */
export async function getStream(client, key, options) {
  await init();
  const window = positive(options, 'window', DEFAULT_WINDOW);
  const progress = reporter(options);
  // The stream's own signal: the caller's, or the stream's cancel.
  const cancel = new AbortController();
  const signals = [cancel.signal, options?.signal].filter(Boolean);
  const sender = new Sender(client, { ...options, signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0] });
  const plainKey = keyOf(key, options);
  const parent = await readParent(sender, plainKey, options);
  if (parent === undefined) throw dynasliceError('NOT_FOUND', `no item has the key ${keyText(parentRequest(plainKey, options).Key, options)}`);
  const reader = new (boundApi().ChunkReader)(parent, options);
  const chunks = reader.chunkCount;
  const consistent = flag(options, 'consistentRead', true);
  const ahead = new Map();
  let fetched = 0;
  let pushed = 0;
  let bytesRead = 0;
  /** Starts fetching the chunks of the window not yet asked for. */
  const fill = () => {
    for (; fetched < chunks && fetched < pushed + window; fetched++) {
      const request = { RequestItems: { [reader.chunkTable]: { Keys: reader.chunkKeys(fetched, fetched + 1), ConsistentRead: consistent } } };
      const item = sender.batchGet(request).then((items) => items[0]);
      item.catch(() => {}); // seen when its turn comes
      ahead.set(fetched, item);
    }
  };
  const stop = () => {
    cancel.abort(new DOMException('the stream was cancelled', 'AbortError'));
    reader.free();
  };
  return new ReadableStream(
    {
      async pull(controller) {
        try {
          for (;;) {
            sender.checkAborted();
            let piece = reader.read();
            if (piece.length === 0 && pushed < chunks) {
              fill();
              const chunk = await ahead.get(pushed);
              ahead.delete(pushed);
              if (chunk === undefined) {
                throw dynasliceError('CHUNK_MISSING', `chunk ${pushed} of ${chunks} was not found: the item was overwritten or deleted while it was read`);
              }
              piece = reader.push(chunk);
              pushed += 1;
              fill();
            }
            if (piece.length > 0) {
              bytesRead += piece.length;
              controller.enqueue(piece);
              progress({ bytesRead, totalBytes: reader.size, chunksRead: pushed, chunks });
              return;
            }
            if (pushed === chunks) {
              reader.finish();
              reader.free();
              controller.close();
              return;
            }
          }
        } catch (error) {
          stop();
          controller.error(error);
        }
      },
      cancel: stop,
    },
    { highWaterMark: 0 },
  );
}

/** A positive integer option, `fallback` when absent. */
function positive(options, name, fallback) {
  const value = options?.[name];
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw badOption(name, 'a positive integer');
  return value;
}

/**
 * Deletes the item with `key` and its chunks: the parent first (on the
 * condition that it is still the version read), then the chunks.
 */
export async function deleteItem(client, key, options) {
  await init();
  const sender = new Sender(client, options);
  const plainKey = keyOf(key, options);
  const stored = await readParent(sender, plainKey, options);
  if (stored === undefined) return { deleted: false, chunksDeleted: 0, chunksLeft: 0, consumed: consumedOf(sender) };
  const plan = deleteRequests(stored, options);
  if (!(await sender.delete(plan.deleteItem)) && (await readParent(sender, plainKey, options)) !== undefined) {
    throw conflict(plan.deleteItem.Key, options);
  }
  const chunks = plan.batchWriteItems.reduce((n, b) => n + Object.values(b.RequestItems).reduce((m, r) => m + r.length, 0), 0);
  const chunksLeft = await cleanUp(sender, plan.batchWriteItems);
  return { deleted: true, chunksDeleted: chunks - chunksLeft, chunksLeft, consumed: consumedOf(sender) };
}

/**
 * Deletes chunks no parent references once they are older than
 * `graceMs` (default 1 hour), judged by the store's clock. A parent whose
 * manifest cannot be read keeps every chunk of its key.
 */
export async function gc(client, options) {
  await init();
  const sender = new Sender(client, options);
  const graceMs = options?.graceMs ?? DEFAULT_GRACE_MS;
  if (typeof graceMs !== 'number' || !(graceMs >= 0)) throw badOption('graceMs', 'a number of milliseconds, 0 or more');
  const dryRun = flag(options, 'dryRun', false);
  const { driver } = boundApi();
  const report = { chunks: 0, referenced: 0, young: 0, deleted: 0, unreadable: 0, unreadableParents: [] };
  // parent key (as JSON) -> { parentKey, versions: version -> { versionMs, keys } }
  const found = new Map();
  await sender.scan(driver.gcScan(options), (items) => {
    for (const item of items) {
      const chunk = driver.chunkOf(item, options);
      if (chunk === undefined) continue;
      report.chunks += 1;
      const id = JSON.stringify(chunk.parentKey);
      const parent = found.get(id) ?? { parentKey: chunk.parentKey, versions: new Map() };
      found.set(id, parent);
      const version = parent.versions.get(chunk.version) ?? { versionMs: chunk.versionMs, keys: [] };
      parent.versions.set(chunk.version, version);
      version.keys.push(chunk.key);
    }
  });
  const doomed = [];
  const dynamodb = { ...options, format: 'dynamodb' };
  for (const { parentKey, versions } of found.values()) {
    const stored = await sender.get(parentRequest(parentKey, dynamodb));
    // The stored parent's version, or why it cannot be read.
    let referenced;
    let unreadable;
    if (stored !== undefined) {
      try {
        referenced = readRequests(stored, dynamodb).version;
      } catch (error) {
        unreadable = `${error.message} [${error.code}]`;
        report.unreadableParents.push({ key: parentKey, reason: unreadable });
      }
    }
    const nowMs = sender.clock.nowMs();
    for (const [version, { versionMs, keys }] of versions) {
      if (version === referenced) report.referenced += keys.length;
      else if (unreadable !== undefined) report.unreadable += keys.length;
      else if (versionMs + graceMs > nowMs) report.young += keys.length;
      else {
        report.deleted += keys.length;
        doomed.push(...keys);
      }
    }
  }
  if (!dryRun && doomed.length > 0) await sender.batchWrites(driver.chunkDeletes(doomed, dynamodb));
  return { ...report, dryRun, consumed: consumedOf(sender) };
}
