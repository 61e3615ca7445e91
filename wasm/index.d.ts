/**
 * dynaslice: store DynamoDB items of any size. Exact item sizes, validation,
 * compression, and versioned chunk splitting and reassembly, computed by the
 * same Rust core the native host uses, compiled to WebAssembly.
 *
 * In Node the module is ready on import. In browsers, `await init()` first.
 * Every function throws a {@link DynasliceError} on bad input; the module
 * keeps working after any error.
 */

/**
 * One value in DynamoDB JSON, the shape `@aws-sdk/client-dynamodb` uses
 * (binary as `Uint8Array`). Assignable to the SDK's own `AttributeValue`.
 */
export type AttributeValue =
  | { S: string }
  | { N: string }
  | { B: Uint8Array }
  | { BOOL: boolean }
  | { NULL: true }
  | { L: AttributeValue[] }
  | { M: Record<string, AttributeValue> }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: Uint8Array[] };

/** A DynamoDB item in DynamoDB JSON, as dynaslice returns it. */
export type DynamoItem = Record<string, AttributeValue>;

/**
 * A DynamoDB item in DynamoDB JSON as dynaslice accepts it: its own output,
 * or the SDK's `Record<string, AttributeValue>` (B may also be base64 text).
 */
export type DynamoItemInput = Record<string, object>;

/** A DynamoDB item as plain JavaScript values, as `@aws-sdk/util-dynamodb` marshalls them. */
export type PlainItem = Record<string, unknown>;

/** Every error dynaslice throws: an `Error` with a stable `code`. */
export interface DynasliceError extends Error {
  name: 'DynasliceError';
  /**
   * Stable machine-readable code, e.g. `ITEM_TOO_LARGE`, `NUMBER_TOO_PRECISE`,
   * `CHUNK_MISSING`, `DECOMPRESS_LIMIT`, `INPUT_INVALID`, `OPTIONS_INVALID`.
   * The message says what is wrong, with the numbers.
   */
  code: string;
  /** For an invalid item given to `split`: every rule it breaks. */
  violations?: Violation[];
}

/**
 * A DynamoDB number kept as exact decimal text, for values a JavaScript
 * number cannot hold exactly. Accepted as input in the `plain` format
 * (so are `@aws-sdk/util-dynamodb`'s `NumberValue` and `bigint`), and
 * returned for every number when `wrapNumbers` is set.
 */
export class NumberValue {
  constructor(value: string | number | bigint);
  /** The number's decimal text, exactly as stored. */
  readonly value: string;
  toString(): string;
  toJSON(): string;
}

/** How items are given to dynaslice. */
export interface InputOptions {
  /**
   * `"dynamodb"` (default): DynamoDB JSON (`{ S: "x" }`, `{ N: "1.5" }`,
   * `{ B: Uint8Array }`). `"plain"`: JavaScript values (`string` to S,
   * `number`/`bigint`/`NumberValue` to N, `Uint8Array` to B, `boolean` to BOOL,
   * `null` to NULL, arrays to L, objects and `Map`s to M, `Set`s to SS/NS/BS).
   * Chosen explicitly, never guessed from the value.
   */
  format?: 'dynamodb' | 'plain';
  /** Plain format: accept integers beyond `Number.MAX_SAFE_INTEGER` (default false: throws `NUMBER_IMPRECISE`). */
  allowImpreciseNumbers?: boolean;
  /** Plain format: drop `undefined` object entries (default false: throws `INPUT_INVALID`). */
  removeUndefinedValues?: boolean;
}

/** How items are given back. */
export interface OutputOptions {
  /** `"dynamodb"` (default) or `"plain"`, as in {@link InputOptions.format}. */
  format?: 'dynamodb' | 'plain';
  /**
   * Plain format: return every number as a {@link NumberValue}. Without it,
   * numbers come back as JavaScript numbers, and a number that would lose
   * digits throws `NUMBER_IMPRECISE` (never silently rounds).
   */
  wrapNumbers?: boolean;
}

/** One key attribute of a table. */
export interface KeyAttribute {
  /** Attribute name. */
  name: string;
  /** Attribute type: string, number or binary. */
  type: 'S' | 'N' | 'B';
}

/** Where a virtual item lives. */
export interface TableOptions {
  /** The parent table's name. */
  table: string;
  /** The parent table's key: the partition key, then the sort key if any. */
  key: readonly [KeyAttribute] | readonly [KeyAttribute, KeyAttribute];
  /**
   * Where chunks go. `"table"` (default): a second table with a string
   * partition key (`chunkTable`, `chunkKey`); chunks spread over partitions.
   * `"collection"`: the parent's own table, in its item collection; needs a
   * string sort key.
   */
  layout?: 'table' | 'collection';
  /** Chunk table name for the `"table"` layout (default `${table}_chunks`). */
  chunkTable?: string;
  /** The chunk table's partition key name (default `"pk"`). */
  chunkKey?: string;
  /**
   * The largest stored item read whole (default 64 MiB): a stored manifest
   * claiming more is refused (`DECOMPRESS_LIMIT`) before any request or
   * buffer is made for it. Deletes and streams take any size.
   */
  maxBytes?: number;
  /**
   * The key attributes of the table's global and local secondary indexes:
   * always kept on the parent with their type, so items stay in their
   * indexes (`sort`: a sort key of some index, 1,024 bytes at most). The
   * driver reads them with DescribeTable when neither this nor `ttl` is given.
   */
  indexKeys?: readonly { name: string; type: 'S' | 'N' | 'B'; sort?: boolean }[];
  /**
   * The table's TTL attribute (null: none): kept on the parent and copied to
   * every chunk, so chunks expire with it. The driver reads it with
   * DescribeTimeToLive when neither this nor `indexKeys` is given.
   */
  ttl?: string | null;
  /**
   * The table chunks go to has the anchors index (`dynaslice-anchors`: a global secondary index
   * on the binary `_da`, keys only; docs/FORMAT.md §6), as `dynaslice tables create` makes it:
   * plans count the write unit each anchor's index entry costs, and `gc` reads the index instead
   * of every chunk (default false).
   */
  anchors?: boolean;
}

/** A broken DynamoDB rule, found by {@link validateItem}. */
export interface Violation {
  /** Stable code, e.g. `ITEM_TOO_LARGE`, `SET_DUPLICATE`, `KEY_MISSING`. */
  code: string;
  /** Where: `orders[3].total`; empty for the item as a whole. */
  path: string;
  /** What is wrong, with the numbers. */
  message: string;
}

/** Options of {@link validateItem}. */
export interface ValidateOptions extends InputOptions {
  /** Check key presence, type and size against this key schema. */
  key?: readonly [KeyAttribute] | readonly [KeyAttribute, KeyAttribute];
  /** The item size limit (default and maximum 409,600 bytes). */
  maxItemBytes?: number;
}

/** The codecs dynaslice speaks. */
export type Codec = 'none' | 'deflate' | 'zlib' | 'gzip' | 'snappy' | 'zstd';

/** Options of {@link compress}. */
export interface CompressOptions {
  /** The codec (default `"zstd"`). */
  codec?: Codec;
  /** deflate, zlib, gzip: 0 to 10 (default 6). zstd: only 1 (its fastest level). none, snappy: no level. */
  level?: number;
}

/** Options of {@link decompress}. */
export interface DecompressOptions {
  /** Refuse frames that decompress to more than this many bytes, before allocating (default 64 MiB). */
  maxBytes?: number;
}

/** Options of {@link split}. */
export interface SplitOptions extends TableOptions, InputOptions {
  /** `"auto"` (default: smallest stored size, faster codec within 5 %), or a fixed codec. */
  codec?: 'auto' | Codec;
  /** Level for a fixed codec, as in {@link CompressOptions.level}. */
  level?: number;
  /** Largest chunk item in bytes, exact (default and maximum 409,600; minimum 2,048). */
  chunkItemBytes?: number;
  /** Items this size or smaller are not split, and the parent must fit it (default and maximum 409,600). */
  itemLimit?: number;
  /** Attributes are moved off the parent, largest first, until it is this small (default 4,096). */
  parentBudget?: number;
  /** Largest encoded payload accepted (default 64 MiB). */
  maxRawBytes?: number;
  /** Keep a compressed payload on the parent when it fits there (default true). */
  inline?: boolean;
  /** Attributes that always stay on the parent, such as secondary index keys. */
  keep?: string[];
  /**
   * What the write replaces; its commit is conditional on it.
   * `"absent"` (default): no item with this key exists.
   * The stored parent as read (DynamoDB JSON): that exact version is still there;
   * its chunks are deleted by `requests.cleanup` after the commit.
   * `"any"`: no condition (a replaced version's chunks are left to garbage collection).
   */
  expect?: 'absent' | 'any' | DynamoItemInput;
  /**
   * How the commit treats a writer that committed since the parent was read.
   * `"conditional"` (default): the commit is conditional on `expect`.
   * `"overwrite"`: last writer wins, as PutItem does: a single item's `putItem`
   * is unconditional with `ReturnValues: "ALL_OLD"`, and a batch write gets
   * `requests.overwrite` (see {@link WriteRequests}); a transaction stays
   * conditional on `expect` (it cannot return what it replaced).
   */
  commit?: 'conditional' | 'overwrite';
  /**
   * `"batch"` (default): batches, then a commit; half the write units of a
   * transaction, which bills every write twice, and readers see the old item
   * or the new one all the same (a crash leaves orphan chunks for gc).
   * `"atomic"`: one transaction. `"auto"`: one transaction when it fits, else
   * batches.
   */
  mode?: 'auto' | 'atomic' | 'batch';
  /** The write's version id (a ULID); default: a fresh one from the clock and `crypto.getRandomValues`. */
  version?: string;
}

/** `PutItemInput` of `@aws-sdk/client-dynamodb`. */
export interface PutItemInput {
  TableName: string;
  Item: DynamoItem;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: DynamoItem;
  /** `"ALL_OLD"` on a last-writer-wins commit: its answer returns the item it replaced. */
  ReturnValues?: 'ALL_OLD';
}

/** `DeleteItemInput` of `@aws-sdk/client-dynamodb`. */
export interface DeleteItemInput {
  TableName: string;
  Key: DynamoItem;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: DynamoItem;
}

/** `GetItemInput` of `@aws-sdk/client-dynamodb`. */
export interface GetItemInput {
  TableName: string;
  Key: DynamoItem;
  ConsistentRead: boolean;
}

/** `BatchWriteItemInput` of `@aws-sdk/client-dynamodb`: at most 25 requests and 16 MB. */
export interface BatchWriteItemInput {
  RequestItems: Record<string, Array<{ PutRequest: { Item: DynamoItem } } | { DeleteRequest: { Key: DynamoItem } }>>;
}

/** `TransactWriteItemsInput` of `@aws-sdk/client-dynamodb`: at most 100 actions and 4 MB. */
export interface TransactWriteItemsInput {
  TransactItems: Array<{ Put: PutItemInput } | { Delete: DeleteItemInput }>;
}

/** `BatchGetItemInput` of `@aws-sdk/client-dynamodb`: at most 100 keys, under 16 MB of items. */
export interface BatchGetItemInput {
  RequestItems: Record<string, { Keys: DynamoItem[]; ConsistentRead: boolean }>;
}

/**
 * The requests that write an item, in the order to send them. Exactly one of
 * `putItem`, `transactWriteItems` and `commit` is present: send
 * `putItem` or `transactWriteItems`, or every `batchWriteItems` (in any order,
 * retrying `UnprocessedItems`) and then `commit`. If the commit's condition
 * fails and the stored parent is not this write's version, send `abort`.
 * After a successful write, send `cleanup`.
 */
export interface WriteRequests {
  /** `"single"`: one PutItem; `"atomic"`: one TransactWriteItems; `"batch"`: batches, then the commit. */
  mode: 'single' | 'atomic' | 'batch';
  /** Single mode: the conditional PutItem. */
  putItem?: PutItemInput;
  /** Atomic mode: chunks and the conditional parent, all or nothing. */
  transactWriteItems?: TransactWriteItemsInput;
  /** Batch mode: the chunk puts. */
  batchWriteItems?: BatchWriteItemInput[];
  /**
   * Batch mode, `commit: "overwrite"`: the commit point, an unconditional
   * PutItem of the parent returning the item it replaced (`Attributes`), whose
   * chunks are then to be deleted. Resend it only after throttling; after an
   * ambiguous failure (5xx, lost connection) send `commit` instead, never this
   * again: a late copy could point the parent at chunks a later writer deleted.
   */
  overwrite?: PutItemInput;
  /** Batch mode: the commit point conditional on `expect` (the fallback of `overwrite`). */
  commit?: PutItemInput;
  /** Batch mode: deletes of this write's chunks, for a lost race. */
  abort?: BatchWriteItemInput[];
  /** After success: deletes of the replaced version's chunks. */
  cleanup: BatchWriteItemInput[];
}

/** What the parent records about a split item. */
export interface ManifestSummary {
  /** The write's version id. */
  version: string;
  /** The codec of the stored payload. */
  codec: Codec;
  /** Chunk items of every frame (0 when the payload is inline on the parent). */
  chunkCount: number;
  /** Stored payload bytes of every frame (after compression, with framing). */
  storedBytes: number;
  /** Encoded payload bytes of every frame before compression. */
  rawBytes: number;
  /** True when the payload is on the parent and there are no chunks. */
  inline: boolean;
  /** Attributes moved off the parent, in every frame. */
  spilled: string[];
  /**
   * Groups: large attributes stored as frames of their own, whose chunks
   * an update of other attributes reuses (0 when the payload is one frame).
   */
  groups: number;
  /** Where the payload is when it is in S3 (manifest format 3; the driver's `s3` option). */
  object?: { bucket: string; key: string; etag: string };
}

/** The result of {@link split}. */
export interface SplitResult {
  /** The parent item (DynamoDB JSON): the item itself when it fits. */
  parent: DynamoItem;
  /** Chunk items (DynamoDB JSON), each at most `chunkItemBytes`. */
  chunks: DynamoItem[];
  /** Present when the item was split. */
  manifest?: ManifestSummary;
  /** The requests to send. */
  requests: WriteRequests;
  /** Write capacity units the requests consume (transactions count double; cleanup not included). */
  writeUnits: number;
  /**
   * What the write costs in each mode, whichever mode was planned (from {@link split} only,
   * not {@link Splitter.finish}): `atomic` is `null` when the item does not fit one
   * transaction; it bills every write twice, so it is about double `batch` for a split item.
   */
  costs?: { batch: number; atomic: number | null };
  /**
   * The same write capacity request by request, in the order they are sent: what each
   * request writes and costs, for drawing a plan or pacing it against a table's capacity.
   * `abort` and `cleanup` are not included. The requests' `writeUnits` add up to
   * {@link SplitResult.writeUnits}, except after {@link Splitter.finish}, whose chunks went
   * out as `push` returned them: there it holds the commit alone.
   */
  capacity: RequestCapacity[];
}

/**
 * One request of a write and what it costs, in {@link SplitResult.capacity}. DynamoDB bills
 * one write capacity unit per started KB (1,024 bytes) of each item, at least one per item,
 * and twice that inside a transaction.
 */
export interface RequestCapacity {
  /** The DynamoDB operation that sends it. */
  operation: 'PutItem' | 'TransactWriteItems' | 'BatchWriteItem';
  /** Billed at the transactional rate (twice the units). */
  transactional: boolean;
  /** The items it writes, in the request's order. */
  items: ItemCapacity[];
  /** Write capacity units it consumes: the sum of its items'. */
  writeUnits: number;
}

/** One item of a {@link RequestCapacity}. */
export interface ItemCapacity {
  /** True for a chunk item, false for the parent (or the item itself when it was not split). */
  chunk: boolean;
  /** Its exact size in bytes, as {@link itemSize} measures it. */
  bytes: number;
  /** Write capacity units it consumes in its request. */
  writeUnits: number;
}

/** Options of {@link reassemble} (`maxBytes` refuses larger payloads before decoding). */
export interface ReassembleOptions extends TableOptions, OutputOptions {}

/** Options of {@link readRequests}. */
export interface ReadOptions extends TableOptions {
  /** Read chunks strongly consistent (default true). */
  consistentRead?: boolean;
}

/** The result of {@link readRequests}. */
export interface ReadRequests {
  /** BatchGetItem requests for every chunk (retry `UnprocessedKeys`). */
  batchGetItems: BatchGetItemInput[];
  /** Read capacity units they consume. */
  readUnits: number;
  /** The version the chunks belong to; absent for an item stored whole. */
  version?: string;
}

/**
 * The result of {@link readCapacity}. DynamoDB bills one read capacity unit per started
 * 4 KB (4,096 bytes) of each item read strongly consistent, at least one per item, and half
 * that eventually consistent.
 */
export interface ReadCapacity {
  /** The parent's GetItem: strongly consistent, as {@link parentRequest} makes it. */
  parentReadUnits: number;
  /** The chunks' BatchGetItems: {@link ReadRequests.readUnits} for the same options. */
  chunkReadUnits: number;
  /** The whole read: the parent and every chunk. */
  readUnits: number;
}

/** The result of {@link deleteRequests}. */
export interface DeleteRequests {
  /** The conditional delete of the parent: send first. */
  deleteItem: DeleteItemInput;
  /** Then the deletes of its chunks. */
  batchWriteItems: BatchWriteItemInput[];
}

/** The exact size DynamoDB bills and limits for `item`, in bytes. */
export function itemSize(item: DynamoItemInput | PlainItem, options?: InputOptions): number;

/** Every DynamoDB rule `item` breaks; an empty array when DynamoDB accepts it. */
export function validateItem(item: DynamoItemInput | PlainItem, options?: ValidateOptions): Violation[];

/** Compresses bytes into a self-describing frame (codec, lengths and digest inside). */
export function compress(bytes: Uint8Array | ArrayBuffer, options?: CompressOptions): Uint8Array;

/** Decompresses a frame made by {@link compress}, checking its length and digest. */
export function decompress(bytes: Uint8Array | ArrayBuffer, options?: DecompressOptions): Uint8Array;

/** Splits an item into a parent and chunks and plans the requests that write it. */
export function split(item: DynamoItemInput | PlainItem, options: SplitOptions): SplitResult;

/**
 * Rebuilds an item from its parent and chunks (DynamoDB JSON, any order), checking every digest.
 * Binary values of 64 KiB or more are views (`subarray`) of one buffer holding the item, so a
 * payload is not copied again; smaller ones are copies. Use `byteOffset`/`byteLength` (or
 * `slice()`) rather than `.buffer` alone.
 */
export function reassemble(parent: DynamoItemInput, chunks: DynamoItemInput[], options: ReassembleOptions): DynamoItem | PlainItem;

/** The consistent GetItem request for the parent with this key. */
export function parentRequest(key: DynamoItemInput | PlainItem, options: TableOptions & InputOptions): GetItemInput;

/** The BatchGetItem requests for a parent's chunks (none for an unsplit or inline parent). */
export function readRequests(parent: DynamoItemInput, options: ReadOptions): ReadRequests;

/** The requests deleting a stored item: the parent first, then its chunks. */
export function deleteRequests(parent: DynamoItemInput, options: TableOptions): DeleteRequests;

/**
 * DynamoDB's item size limit: 409,600 bytes, attribute names included. Larger items are what
 * {@link split} is for. In browsers it is set by `init()` (or `initSync`), like every export
 * that needs the module: `undefined` before.
 */
export const MAX_ITEM_BYTES: number;

/**
 * What reading a stored item whole costs: its parent's GetItem, then its chunks' BatchGetItems
 * (`consistentRead` applies to the chunks; the parent is always read strongly consistent).
 * `readCapacity(parent, table).readUnits`: one unit for a parent under 4 KB, plus its chunks'.
 */
export function readCapacity(parent: DynamoItemInput, options: ReadOptions): ReadCapacity;

/**
 * True when the stored parent (DynamoDB JSON, as GetItem returned it) is the write of `version`
 * (a {@link ManifestSummary.version}): the check after a batch write's commit failed its
 * condition, where a retried commit may have succeeded unseen. False for no item (`undefined`),
 * an item that was not split, or another version. A manifest that cannot be read throws
 * `MANIFEST_INVALID` or `MANIFEST_UNSUPPORTED_VERSION` rather than answer: unreadable is not
 * proof of another version. A `version` that is not a version id throws `VERSION_ID_INVALID`.
 * Only the parent's manifest is read, however large the parent.
 */
export function carriesVersion(parent: DynamoItemInput | undefined, version: string): boolean;

/**
 * A chunk item's data bytes, e.g. to send chunks as one binary body: the chunk's own
 * `Uint8Array` when it holds one (not a copy). Throws `CHUNK_MALFORMED` for an item that is
 * not a chunk. Does not verify the bytes; {@link reassemble} does.
 */
export function chunkData(chunk: DynamoItemInput): Uint8Array;

/**
 * The CRC-32 (ISO-HDLC: gzip's, and S3's `x-amz-checksum-crc32` as an unsigned number) of
 * `bytes`, or of the pieces in order: a split's frame is its chunks' `chunkData` in sequence
 * order, which `POST /api/upload/object` takes the checksum of (docs/API.md).
 */
export function crc32(bytes: Uint8Array | Iterable<Uint8Array>): number;

/** Options of {@link Splitter} and {@link splitStream}. */
export interface StreamOptions extends TableOptions, InputOptions {
  /** Name of the binary attribute the streamed bytes become. */
  attribute: string;
  /**
   * The payload's exact length in bytes (for a `Blob`, `splitStream` reads
   * `blob.size`); left out, the payload is as long as what is pushed
   * before `finish()`, and chunk 0 comes out of `finish()`.
   */
  size?: number;
  /** `"none"` (default), `"deflate"`, `"zlib"` or `"gzip"`: the codecs that compress as bytes arrive. */
  codec?: 'none' | 'deflate' | 'zlib' | 'gzip';
  /** deflate family: 0 to 10 (default 6). */
  level?: number;
  /** Largest chunk item in bytes, exact (default and maximum 409,600). */
  chunkItemBytes?: number;
  /** Largest payload accepted (default: none but 65,536 chunks; a stream is never held whole). */
  maxRawBytes?: number;
  /** What the write replaces, as in {@link SplitOptions.expect}. */
  expect?: 'absent' | 'any' | DynamoItemInput;
  /** The write's version id (a ULID); default: a fresh one. */
  version?: string;
}

/**
 * The streaming splitter: an item whose one large binary attribute arrives
 * in pieces. Never holds more than the chunk it is filling. Call `free()`
 * when done (or use {@link splitStream}, which does).
 */
export class Splitter {
  /** `item`: the key and small attributes (in `options.format`). */
  constructor(item: DynamoItemInput | PlainItem, options: StreamOptions);
  /** Payload bytes received so far. */
  readonly received: number;
  /** Takes the next bytes; returns the chunk items they completed, ready to write. */
  push(bytes: Uint8Array | ArrayBuffer): DynamoItem[];
  /**
   * Ends the payload (throws `STREAM_LENGTH_MISMATCH` if fewer bytes than `size` came).
   * `chunks` are the last chunk items; `requests` has mode `"batch"` with no
   * `batchWriteItems` (the chunks were written as they came), then `commit`,
   * `abort` and `cleanup`; `writeUnits` covers every chunk and the commit.
   */
  finish(): SplitResult;
  /** Releases the WebAssembly memory it holds. */
  free(): void;
}

/** Progress of {@link splitStream}. */
export interface StreamProgress {
  /** Payload bytes read so far. */
  bytesRead: number;
  /** The payload's size: undefined until a stream of unknown length ends. */
  totalBytes: number | undefined;
  /** Chunk items produced so far. */
  chunks: number;
}

/**
 * Splits a `Blob`, a `ReadableStream`, or any async iterable of `Uint8Array`
 * (Node streams) as the binary attribute `options.attribute` of `item`.
 * Each chunk item is passed to `onChunk`, awaited before more is read, so a
 * slow upload holds the reading back and memory stays bounded.
 * Resolves to {@link Splitter.finish}'s result (its last `chunks` already
 * went to `onChunk`).
 */
export function splitStream(
  source: Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  item: DynamoItemInput | PlainItem,
  options: Omit<StreamOptions, 'size'> & {
    size?: number;
    onChunk?: (chunk: DynamoItem) => void | Promise<void>;
    onProgress?: (progress: StreamProgress) => void;
  },
): Promise<SplitResult>;

/** Options of {@link ChunkReader}. */
export interface ChunkReaderOptions extends TableOptions {
  /** Name of the attribute to read: a string (`S`, read as its UTF-8 bytes) or binary (`B`). */
  attribute: string;
}

/**
 * Reads one string or binary attribute of a stored item (a file) as its
 * chunks arrive, in bounded memory whatever its size: fetch chunks in
 * order, a few at a time ({@link ChunkReader.chunkKeys}), `push` each one,
 * `read()` until it returns an empty array, then `finish()`. Each chunk is
 * checked whole (key, version, length, digest) before any of its bytes are
 * given: a damaged chunk throws `CHUNK_DIGEST_MISMATCH` from `push`. The
 * whole payload's digest is checked by `finish()`, after the bytes were
 * given. `maxBytes` does not bound the attribute, only what must be held
 * (raw snappy payloads, decoded whole). Call `free()` when done.
 */
export class ChunkReader {
  /**
   * `parent`: the parent as read (GetItem, strongly consistent). Throws
   * `ATTRIBUTE_NOT_FOUND`, `ATTRIBUTE_NOT_BLOB`, or a stored-data code for a
   * damaged manifest.
   */
  constructor(parent: DynamoItemInput, options: ChunkReaderOptions);
  /**
   * How many chunks to push: 0 when the attribute is on the parent or its
   * payload is inline (then `read()` alone gives the bytes).
   */
  readonly chunkCount: number;
  /** The table the chunks are read from (the parent's table in the `"collection"` layout). */
  readonly chunkTable: string;
  /** The attribute's length in bytes, once known (at the latest, after the chunk that holds its start). */
  readonly size: number | undefined;
  /**
   * The keys of chunks `start` up to `end` (not included; an `end` past
   * {@link ChunkReader.chunkCount} stops there), for a `BatchGetItem` of
   * {@link ChunkReader.chunkTable} with `ConsistentRead: true`.
   */
  chunkKeys(start: number, end: number): DynamoItem[];
  /**
   * Takes the next chunk item (chunk 0 first), checked before any of its
   * bytes are given, and returns the first of them; `read()` gives the rest.
   */
  push(chunk: DynamoItemInput): Uint8Array;
  /**
   * The attribute's next bytes (at most 256 KiB at a time); empty when the
   * reader needs the next chunk, or has given everything. Call it until it
   * is empty after every `push`.
   */
  read(): Uint8Array;
  /**
   * Ends the read: throws if a chunk is missing (`CHUNK_MISSING`), the
   * payload fails its digest (`DIGEST_MISMATCH`) or is malformed, the
   * attribute was not found, or bytes were left unread (`READER_NOT_DRAINED`).
   */
  finish(): void;
  /** Releases the WebAssembly memory it holds. */
  free(): void;
}

/**
 * A compiled `WebAssembly.Module`. Spelled without the DOM library, which
 * declares the `WebAssembly` namespace (and `RequestInfo`, `BufferSource`):
 * Node projects with `lib: ["es2022"]` and `@types/node` compile too.
 */
type CompiledModule = typeof globalThis extends { WebAssembly: { Module: abstract new (...args: never[]) => infer M } } ? M : never;

/** The module's bytes: an `ArrayBuffer` or a view of one (the DOM's `BufferSource`). */
type ModuleBytes = ArrayBuffer | ArrayBufferView;

/** Browsers: loads the WebAssembly module (fetched next to this file by default). Resolves when ready. */
export default function init(source?: string | URL | Request | Response | ModuleBytes | CompiledModule): Promise<void>;

/** Loads the WebAssembly module synchronously from its bytes or a compiled module. */
export function initSync(module: ModuleBytes | CompiledModule): void;
