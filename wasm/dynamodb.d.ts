// Types of `dynaslice/dynamodb`: items of any size with @aws-sdk/client-dynamodb.

import type { DynamoItem, DynamoItemInput, ManifestSummary, PlainItem, SplitOptions, TableOptions, InputOptions, OutputOptions } from './index.js';

/**
 * The client: a `DynamoDBClient`, or a `DynamoDBDocumentClient` (with `format: 'plain'`),
 * from `@aws-sdk/client-dynamodb` and `@aws-sdk/lib-dynamodb` v3.
 */
export interface DynamoDBClientLike {
  send(command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
}

/** Retries of each request: throttling, 5xx and dropped connections, and unprocessed batch items. */
export interface RetryOptions {
  /** Attempts of one request (default 10). */
  maxAttempts?: number;
  /** Attempts of a request DynamoDB throttles, and rounds of a batch without progress (default 50). */
  maxThrottledAttempts?: number;
  /** Backoff ceiling of the first retry, doubling each time (default 25). */
  baseDelayMs?: number;
  /** Largest backoff ceiling (default 2000); each wait is a random time below the ceiling (full jitter). */
  maxDelayMs?: number;
}

/** An S3Client from `@aws-sdk/client-s3` v3 (an optional peer dependency). */
export interface S3ClientLike {
  send(command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
}

/**
 * Where a table keeps its large payloads in S3 (docs/FORMAT.md §5a): a streamed payload
 * ({@link putStream}) of `thresholdBytes` or more, or of unknown length, and an item written
 * whole ({@link putItem}, not in atomic mode) of `thresholdBytes` or more, go to one object
 * per version (an item's spilled attributes in one frame), written with `If-None-Match: *` and
 * its CRC-32, and read with `If-Match` on the ETag the parent's manifest records. Every call on
 * such a table takes the same `s3` option.
 */
export interface S3Options {
  /** The S3 client; its own retries are bypassed (the core resends). */
  client: S3ClientLike;
  /** The bucket (it must exist). */
  bucket: string;
  /** Every object key starts with this (default `dynaslice/<table>/`, as the CLI's). */
  prefix?: string;
  /** Payloads of at least this many bytes go to S3 (default 1,048,576). */
  thresholdBytes?: number;
  /** Each multipart part but the last (default 8 MiB; 5 MiB to 5 GiB). */
  partBytes?: number;
}

/** What every driver call takes besides the table. */
export interface DriverOptions {
  /** Keep large payloads in S3; without it, an item whose payload is in S3 reads as `OBJECT_STORE_NOT_CONFIGURED`. */
  s3?: S3Options;
  /** The most batch requests in flight at once (default 16): a write starts at 4, a read with its window (6), and each adapts to throttling between 1 and this. */
  concurrency?: number;
  /** Retry policy (default: 10 attempts, 50 while throttled, 25 ms doubling to 2 s). */
  retry?: RetryOptions;
  /** Stops the operation: it rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Capacity the store reported consuming (ReturnConsumedCapacity TOTAL). */
export interface ConsumedCapacity {
  readUnits: number;
  writeUnits: number;
}

/** Progress of {@link putItem}. */
export interface PutProgress {
  /** Exact item bytes written so far. */
  bytesWritten: number;
  /** Exact item bytes the write sends. */
  totalBytes: number;
  chunksWritten: number;
  chunks: number;
}

/** Progress of {@link putStream}. */
export interface PutStreamProgress {
  /** Payload bytes read from the source so far. */
  bytesRead: number;
  /** The source's size: undefined when it has none (read to its end). */
  totalBytes: number | undefined;
  chunksWritten: number;
  chunks: number;
}

/** Progress of {@link getItem}. */
export interface GetProgress {
  chunksRead: number;
  chunks: number;
}

export interface PutOptions extends Omit<SplitOptions, 'expect' | 'version' | 'commit'>, DriverOptions {
  /**
   * What the stored item must be (optimistic locking). Default: none, the last
   * writer wins as with PutItem, and the replaced version's chunks are deleted.
   * `'absent'`: no item has this key. `{ version }`: the stored item is that
   * version. A stored item that is something else, or a writer that commits
   * first, makes the write fail with `CONFLICT`, its own chunks deleted.
   */
  expect?: 'absent' | { version: string };
  /**
   * Version history: keep the newest `keep` replaced versions (at most 100)
   * and any replaced less than `maxAgeMs` ago. `{ keep: 0 }` turns it off
   * (what was kept is deleted). Default: as the stored item keeps.
   */
  history?: Retention;
  /** The writer's note on this version (at most 256 bytes), listed once it is kept. */
  note?: string;
  onProgress?: (progress: PutProgress) => void;
}

/** What an item's version history keeps. */
export interface Retention {
  keep: number;
  maxAgeMs?: number;
}

/** One version of an item, as {@link listVersions} lists it. */
export interface VersionInfo {
  /** Its id; absent when the current item is stored whole. */
  version?: string;
  current: boolean;
  /** When its write began (ms since the epoch, the store's clock). */
  writtenAt?: number;
  /** When a commit replaced it (ms since the epoch); absent for the current version. */
  replacedAt?: number;
  /** The parent's bytes and the payload's raw length. */
  bytes: number;
  chunks: number;
  note?: string;
}

/** The result of {@link listVersions}. */
export interface Versions {
  /** Absent when the item keeps no history. */
  retention?: Retention;
  /** The current version first, then the kept ones, newest first. */
  versions: VersionInfo[];
}

export interface PutStreamOptions extends Omit<PutOptions, 'onProgress' | 'codec'>, DriverOptions {
  /** The binary attribute the source's bytes become. */
  attribute: string;
  /**
   * The source's exact length (default: a Blob's size); another count is
   * `STREAM_LENGTH_MISMATCH`. Leave it out for a source of unknown length:
   * it is read to its end and its length recorded then.
   */
  size?: number;
  /**
   * The largest payload accepted (default: none but 65,536 chunks, since a
   * stream is never held whole); a stream passing it is cut off there,
   * with nothing committed and its chunks deleted.
   */
  maxRawBytes?: number;
  /** `'none'` (default) or a deflate codec. */
  codec?: 'none' | 'deflate' | 'zlib' | 'gzip';
  onProgress?: (progress: PutStreamProgress) => void;
}

/** The result of {@link putItem} and {@link putStream}. */
export interface PutResult {
  /** How it was written: `'single'` (one PutItem), `'atomic'` (one transaction) or `'batch'`. */
  mode: 'single' | 'atomic' | 'batch';
  /** The version written; absent for an item stored whole. */
  version?: string;
  manifest?: ManifestSummary;
  /** Whether an item was replaced. */
  replaced: boolean;
  /**
   * Last writer wins only: another writer's commit replaced this write's right
   * after it (or raced it after this write's commit answer was lost). The write
   * succeeded, as a PutItem overwritten at once does; its chunks were deleted.
   */
  superseded: boolean;
  /** Exact bytes of the items written (`putStream`: the payload's bytes). */
  bytesWritten: number;
  /** Write capacity units the plan costs. */
  writeUnits: number;
  consumed: ConsumedCapacity;
  /** Deletes of the replaced version's chunks that failed: left to {@link gc}. */
  cleanupLeft: number;
}

export interface GetOptions extends TableOptions, InputOptions, OutputOptions, DriverOptions {
  /** Read chunks strongly consistent (default true). */
  consistentRead?: boolean;
  /** A version the item's history keeps, to read instead of the current one. */
  version?: string;
  onProgress?: (progress: GetProgress) => void;
}

/** The result of {@link getItem}. */
export interface GetResult<T = DynamoItem | PlainItem> {
  /** The item, or undefined when no item has this key. */
  item: T | undefined;
  /** The version read; absent for an item stored whole. */
  version?: string;
  chunksRead: number;
  /** Reads of the parent: more than one when an overwrite replaced the version being read. */
  parentReads: number;
  consumed: ConsumedCapacity;
}

export interface GetStreamOptions extends TableOptions, InputOptions, DriverOptions {
  /** The string or binary attribute whose bytes the stream yields (a string's as UTF-8). */
  attribute: string;
  /** Chunk requests kept ahead of the chunk being read (default {@link DEFAULT_WINDOW}, 6): the stream holds about this many chunks. */
  window?: number;
  /** Read chunks strongly consistent (default true). */
  consistentRead?: boolean;
  onProgress?: (progress: GetStreamProgress) => void;
}

/** Progress of {@link getStream}. */
export interface GetStreamProgress {
  /** Bytes yielded so far. */
  bytesRead: number;
  /** The attribute's length, once known. */
  totalBytes: number | undefined;
  chunksRead: number;
  chunks: number;
}

export interface DeleteOptions extends TableOptions, InputOptions, DriverOptions {}

/** What {@link updateItem} changes: UpdateItem's `SET` and `REMOVE` of top-level attributes. */
export interface Changes {
  /** Attributes added or replaced (DynamoDB JSON, or plain values with `format: 'plain'`). */
  set?: DynamoItemInput | PlainItem;
  /** Names of attributes removed. */
  remove?: string[];
}

export interface UpdateOptions extends Omit<PutOptions, 'expect'> {
  /** Plan and price the update; change nothing. */
  dryRun?: boolean;
  /**
   * Rewrite the item as a new version whatever the changes (which may then be `{}`): its
   * attributes are spilled again by the table's current index keys and TTL, the backfill of an
   * index added after it was written. An absent item stays absent.
   */
  rewrite?: boolean;
}

/** The result of {@link updateItem}. */
export interface UpdateResult {
  /** `'parent'`: one UpdateItem of the parent, no chunk touched. `'rewrite'`: the item written again as a new version. */
  path: 'parent' | 'rewrite';
  /** Why a rewrite was needed (the attribute is in the payload, the TTL is on every chunk, the parent would be too large). */
  reason?: string;
  /** False for a dry run. */
  applied: boolean;
  /** Write units planned: exact for a parent update, an estimate from the stored sizes for a rewrite. */
  writeUnits: number;
  /** The attributes a rewrite left where they were: groups it did not change, whose chunks the new version reuses. */
  reused: string[];
  /** The rewrite's write. */
  put?: PutResult;
  /** Capacity units consumed, every request counted. */
  consumed: ConsumedCapacity;
}

/** The result of {@link deleteItem}. */
export interface DeleteResult {
  deleted: boolean;
  chunksDeleted: number;
  /** Chunk deletes that failed: left to {@link gc}. */
  chunksLeft: number;
  /** The version's S3 object was deleted too (a failed delete is left to {@link gcObjects}). */
  objectDeleted: boolean;
  consumed: ConsumedCapacity;
}

export interface QueryOptions extends TableOptions, InputOptions, Omit<OutputOptions, 'format'>, DriverOptions {
  /** Virtual items read whole at once (default 4). */
  itemConcurrency?: number;
  /** Yield the parents of virtual items as stored (with `_ds`), reading no chunk. */
  lazy?: boolean;
}

/** What {@link queryItems} returns once its items are all yielded. */
export interface QuerySummary {
  items: number;
  /** Virtual items read whole. */
  virtualItems: number;
  /** Chunk items the pages held (an item collection's), never yielded. */
  chunksSkipped: number;
  /** Parents deleted (or expired) between their page and their read: not yielded. */
  vanished: number;
  pages: number;
  consumed: ConsumedCapacity;
}

/** A `QueryCommand` input (or a `ScanCommand`'s, with no `KeyConditionExpression`); `TableName` defaults to the `table` option. */
export interface QueryInput {
  TableName?: string;
  IndexName?: string;
  KeyConditionExpression?: string;
  FilterExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: DynamoItemInput | PlainItem;
  ConsistentRead?: boolean;
  ScanIndexForward?: boolean;
  Limit?: number;
  ExclusiveStartKey?: DynamoItemInput | PlainItem;
}

export interface GcOptions extends TableOptions, DriverOptions {
  /** Unreferenced chunks younger than this are kept (default 3,600,000: one hour), by the store's clock. */
  graceMs?: number;
  /** Report only; delete nothing. */
  dryRun?: boolean;
  /** Scan segments at once (a parallel Scan, default 1). */
  segments?: number;
  /** The most capacity units (read and write) per second, on average. */
  maxUnitsPerSecond?: number;
  /**
   * With the table option `anchors: true`, gc reads the anchors index instead of every chunk:
   * one small entry per 64 chunks, so reads grow with versions, not bytes, and counts are of
   * anchors. `everyChunk: true` scans every chunk anyway, which also finds chunks written before
   * anchors (default false).
   */
  everyChunk?: boolean;
  /** Called after every page with the counts so far. */
  onProgress?: (progress: { chunks: number; deleted: number }) => void;
}

/** The result of {@link gc}. */
export interface GcReport {
  /** Chunks found. */
  chunks: number;
  /** Chunks of a stored parent's version. */
  referenced: number;
  /** Chunks and records of versions their parent's history keeps. */
  kept: number;
  /** Unreferenced chunks within the grace period. */
  young: number;
  /** Unreferenced chunks deleted (or, with `dryRun`, to delete). */
  deleted: number;
  /** Chunks kept because their parent's manifest cannot be read. */
  unreadable: number;
  unreadableParents: Array<{ key: DynamoItem; reason: string }>;
  dryRun: boolean;
  consumed: ConsumedCapacity;
}

/** The most batch requests in flight at once by default (16), the core's. */
export const DEFAULT_CONCURRENCY: number;
/** The default retry policy. */
export const DEFAULT_RETRY: Readonly<Required<RetryOptions>>;
/** gc's default grace period in milliseconds (one hour). */
export const DEFAULT_GRACE_MS: number;
/** Chunk requests a read keeps ahead of the chunk it decodes by default (6), the core's read window, as the host's. */
export const DEFAULT_WINDOW: number;

/**
 * Writes `item`: reads the stored parent, splits the item, and commits conditionally on
 * that same parent still being there. Throws `CONFLICT` when another writer committed first
 * (this write's chunks deleted).
 */
export function putItem(client: DynamoDBClientLike, item: DynamoItemInput | PlainItem, options: PutOptions): Promise<PutResult>;

/**
 * Writes `source` as the binary attribute `options.attribute` of `item`, chunk by chunk as it
 * is read (memory stays within a few chunks), then commits as {@link putItem} does.
 */
export function putStream(
  client: DynamoDBClientLike,
  source: Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  item: DynamoItemInput | PlainItem,
  options: PutStreamOptions,
): Promise<PutResult>;

/** Reads the item with `key` whole. */
export function getItem(client: DynamoDBClientLike, key: DynamoItemInput | PlainItem, options: GetOptions): Promise<GetResult>;

/**
 * The bytes of one string or binary attribute of the stored item, as a stream that yields
 * them as the chunks arrive, holding about `window` chunks. Each chunk's digest is checked
 * before any of its bytes are yielded; damage errors the stream with the core's code
 * (`CHUNK_DIGEST_MISMATCH`, …). Rejects with `NOT_FOUND` or `ATTRIBUTE_NOT_FOUND` before any
 * chunk is read. Cancelling the stream stops its requests.
 */
export function getStream(client: DynamoDBClientLike, key: DynamoItemInput | PlainItem, options: GetStreamOptions): Promise<ReadableStream<Uint8Array>>;

/**
 * Sets and removes attributes of the item with `key`, as UpdateItem does: one conditional
 * UpdateItem when they live on the parent, a rewrite as a new version when they are in its
 * payload. A concurrent overwrite makes it reject with CONFLICT.
 */
/** Options of {@link putItems}: a write's, and how many items are written at once. */
export interface PutItemsOptions extends Omit<PutOptions, 'onProgress'> {
  /** Items written at once (default 8). */
  inFlight?: number;
  onProgress?: (progress: { written: number; failed: number }) => void;
}

/** The result of {@link putItems}. */
export interface PutItemsResult {
  written: number;
  /** Each item that could not be stored: its index in the items, its code and message. */
  failed: Array<{ index: number; code: string; message: string }>;
  bytesWritten: number;
  consumed: ConsumedCapacity;
}

/** Writes many items, `inFlight` at once; an item that cannot be stored is reported and the rest go in. */
export function putItems(client: DynamoDBClientLike, items: Iterable<DynamoItemInput | PlainItem> | AsyncIterable<DynamoItemInput | PlainItem>, options: PutItemsOptions): Promise<PutItemsResult>;

/** The versions of the item with `key` (undefined when there is none): the current one and those its history keeps. */
export function listVersions(client: DynamoDBClientLike, key: DynamoItemInput | PlainItem, options: TableOptions & InputOptions & DriverOptions): Promise<Versions | undefined>;

/** Makes a kept version current again, as a new version: getItem with `version`, then putItem. */
export function restoreVersion(client: DynamoDBClientLike, key: DynamoItemInput | PlainItem, version: string, options: PutOptions): Promise<PutResult>;

export function updateItem(client: DynamoDBClientLike, key: DynamoItemInput | PlainItem, changes: Changes, options: UpdateOptions): Promise<UpdateResult>;

/**
 * Whole items from the caller's own Query (or Scan): each virtual item read whole and checked,
 * plain items as the page gave them, chunk items never; in the pages' order.
 */
export function queryItems(client: DynamoDBClientLike, input: QueryInput, options: QueryOptions): AsyncGenerator<DynamoItem | PlainItem, QuerySummary, undefined>;

/** Deletes the item with `key`, then its chunks. */
export function deleteItem(client: DynamoDBClientLike, key: DynamoItemInput | PlainItem, options: DeleteOptions): Promise<DeleteResult>;

/** Options of {@link verify}. */
export interface VerifyOptions extends TableOptions, Omit<OutputOptions, 'format'>, DriverOptions {
  /** Virtual items read whole at once, per segment (default 4). */
  itemConcurrency?: number;
  /** Scan segments at once (a parallel Scan, default 1). */
  segments?: number;
  /** The most read units per second, on average, shared by the segments. */
  maxUnitsPerSecond?: number;
  /** Called after every page with the counts so far. */
  onProgress?: (progress: { items: number; damaged: number }) => void;
}

/** The result of {@link verify}. */
export interface VerifyReport {
  /** Items checked (damaged ones too). */
  items: number;
  /** Of them, virtual items (damaged ones too). */
  virtualItems: number;
  /** The items that do not read back, with the error's code (`CHUNK_DIGEST_MISMATCH`, `CHUNK_MISSING`, `MANIFEST_INVALID`, ...). */
  damaged: Array<{ key: DynamoItem | PlainItem; code: string; message: string }>;
  /** Parents deleted (or expired) between their page and their read. */
  vanished: number;
  /** Chunk items the pages held (an item collection's). */
  chunksSkipped: number;
  consumed: ConsumedCapacity;
}

/** Reads every item of the table whole and checks every digest, reporting each item that does not read back. */
export function verify(client: DynamoDBClientLike, options: VerifyOptions): Promise<VerifyReport>;

/** Deletes chunks no stored parent references, once older than `graceMs`. */
export function gc(client: DynamoDBClientLike, options: GcOptions): Promise<GcReport>;

export interface GcObjectsOptions extends TableOptions, DriverOptions {
  /** The store whose objects are collected. */
  s3: S3Options;
  /** Unreferenced objects and multipart uploads younger than this are kept (default one hour), by S3's clock. */
  graceMs?: number;
  /** Report only; delete nothing. */
  dryRun?: boolean;
}

/** The result of {@link gcObjects}. */
export interface GcObjectsReport {
  /** Objects listed under the prefix. */
  objects: number;
  /** Objects their parent names. */
  referenced: number;
  /** Objects of versions their parent's history keeps. */
  kept: number;
  /** Unreferenced objects within the grace period (or of unknown age). */
  young: number;
  /** Unreferenced objects deleted (or, with `dryRun`, to delete). */
  deleted: number;
  /** Objects kept because their parent's manifest cannot be read. */
  unreadable: number;
  /** Keys under the prefix that name no item and version: never touched. */
  foreign: number;
  /** Multipart uploads aborted (or to abort): older than the grace period. */
  uploadsAborted: number;
  /** Multipart uploads within the grace period. */
  uploadsYoung: number;
  /** False when the server does not list multipart uploads. */
  uploadsListed: boolean;
  dryRun: boolean;
  consumed: ConsumedCapacity;
}

/**
 * Deletes the S3 objects no parent refers to once older than `graceMs` by S3's clock, and aborts
 * stale multipart uploads under the prefix; never touches a key that names no item and version,
 * or an object whose parent's manifest cannot be read.
 */
export function gcObjects(client: DynamoDBClientLike, options: GcObjectsOptions): Promise<GcObjectsReport>;
