// A user's TypeScript: every export of `dynaslice` with its options, checked
// by `tsc --noEmit -p tests/js/types` against the package's index.d.ts. Lines
// marked @ts-expect-error must stay errors: the types refuse those mistakes.
import init, {
  carriesVersion,
  chunkData,
  ChunkReader,
  compress,
  decompress,
  deleteRequests,
  initSync,
  itemSize,
  MAX_ITEM_BYTES,
  NumberValue,
  parentRequest,
  readCapacity,
  readRequests,
  reassemble,
  split,
  Splitter,
  splitStream,
  validateItem,
} from 'dynaslice';
import type {
  AttributeValue,
  BatchWriteItemInput,
  ChunkReaderOptions,
  Codec,
  DynamoItem,
  DynasliceError,
  ItemCapacity,
  ManifestSummary,
  ReadCapacity,
  ReadOptions,
  RequestCapacity,
  SplitOptions,
  SplitResult,
  StreamProgress,
  TableOptions,
  Violation,
} from 'dynaslice';

await init();
await init(new URL('https://example.com/dynaslice_wasm_bg.wasm'));
initSync(new Uint8Array(8));

const table: TableOptions = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const collection: TableOptions = {
  table: 'docs',
  key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }],
  layout: 'collection',
};
const chunkTable: TableOptions = { ...table, layout: 'table', chunkTable: 'blobs', chunkKey: 'id' };

const typed: DynamoItem = { pk: { S: 'doc' }, n: { N: '1.5' }, b: { B: new Uint8Array(4) }, l: { L: [{ NULL: true }] } };
const plainItem = { pk: 'doc', n: 1.5, big: 10n ** 30n, exact: new NumberValue('1.50'), tags: new Set(['a']) };

const size: number = itemSize(typed);
const plainSize: number = itemSize(plainItem, { format: 'plain', allowImpreciseNumbers: false, removeUndefinedValues: true });
const violations: Violation[] = validateItem(typed, { key: [{ name: 'pk', type: 'S' }], maxItemBytes: 409_600, format: 'dynamodb' });
for (const v of violations) console.log(v.code, v.path, v.message);

const codecs: Codec[] = ['none', 'deflate', 'zlib', 'gzip', 'snappy', 'zstd'];
const frame: Uint8Array = compress(new TextEncoder().encode('x'), { codec: codecs[2], level: 9 });
const raw: Uint8Array = decompress(frame, { maxBytes: 1 << 20 });

const options: SplitOptions = {
  ...table,
  format: 'plain',
  codec: 'auto',
  level: 6,
  chunkItemBytes: 409_600,
  parentBudget: 4096,
  maxRawBytes: 64 << 20,
  inline: true,
  keep: ['gsi1pk'],
  expect: 'absent',
  mode: 'auto',
  version: '01HF7YAT00000000000000001A',
};
const result: SplitResult = split(plainItem, options);
const again = split(typed, { ...collection, expect: result.parent, mode: 'batch' });
split(typed, { ...chunkTable, expect: 'any', mode: 'atomic', codec: 'zstd' });
const manifest: ManifestSummary | undefined = result.manifest;
if (manifest) console.log(manifest.version, manifest.codec, manifest.chunkCount, manifest.storedBytes, manifest.rawBytes, manifest.inline, manifest.spilled);
const { requests, writeUnits } = again;
const units: number = writeUnits;
if (requests.mode === 'single' && requests.putItem) console.log(requests.putItem.TableName, requests.putItem.ConditionExpression);
if (requests.mode === 'atomic') console.log(requests.transactWriteItems?.TransactItems.length);
if (requests.mode === 'batch') {
  const batches: BatchWriteItemInput[] = requests.batchWriteItems ?? [];
  console.log(batches.length, requests.commit?.Item, requests.abort?.length);
}
const cleanup: BatchWriteItemInput[] = requests.cleanup;
// Each request as it is sent, what it writes and what it costs; no mode names needed.
for (const request of again.capacity satisfies RequestCapacity[]) {
  const chunks: ItemCapacity[] = request.items.filter((item) => item.chunk);
  const operation: 'PutItem' | 'TransactWriteItems' | 'BatchWriteItem' = request.operation;
  console.log(operation, request.transactional, request.writeUnits, chunks.map((c) => [c.bytes, c.writeUnits]));
}
if (requests.putItem) console.log(requests.putItem.Item);
if (requests.commit && !carriesVersion(again.parent, again.manifest?.version ?? '')) console.log(requests.abort?.length);
const notStored: boolean = carriesVersion(undefined, '01HF7YAT00000000000000001A');
const data: Uint8Array[] = again.chunks.map(chunkData);
const limit: number = MAX_ITEM_BYTES;

const back = reassemble(result.parent, result.chunks, { ...table, format: 'plain', wrapNumbers: true, maxBytes: 1 << 26 });
const typedBack = reassemble(result.parent, result.chunks, table);
const getItem = parentRequest({ pk: 'doc' }, { ...table, format: 'plain' });
const consistent: boolean = getItem.ConsistentRead;
const readOptions: ReadOptions = { ...table, consistentRead: false };
const reads = readRequests(result.parent, readOptions);
const readUnits: number = reads.readUnits;
const readCost: ReadCapacity = readCapacity(result.parent, readOptions);
console.log(readCost.parentReadUnits + readCost.chunkReadUnits === readCost.readUnits);
for (const batch of reads.batchGetItems) console.log(Object.values(batch.RequestItems)[0]?.Keys.length);
const deletes = deleteRequests(result.parent, table);
console.log(deletes.deleteItem.Key, deletes.batchWriteItems.length);

const splitter = new Splitter({ pk: { S: 'upload' } }, { ...table, attribute: 'data', size: 10, codec: 'gzip', level: 1, expect: 'absent' });
const received: number = splitter.received;
const ready: DynamoItem[] = splitter.push(new Uint8Array(10));
const finished: SplitResult = splitter.finish();
splitter.free();
const streamed: SplitResult = await splitStream(new Blob([new Uint8Array(10)]), { pk: 'upload' }, {
  ...table,
  format: 'plain',
  attribute: 'data',
  onChunk: async (chunk: DynamoItem) => console.log(chunk),
  onProgress: (p: StreamProgress) => console.log(p.bytesRead, p.totalBytes, p.chunks),
});

const readerOptions: ChunkReaderOptions = { ...table, attribute: 'data' };
const reader = new ChunkReader(result.parent, readerOptions);
const chunkCount: number = reader.chunkCount;
const readFrom: string = reader.chunkTable;
const keys: DynamoItem[] = reader.chunkKeys(0, 4);
const known: number | undefined = reader.size;
const first: Uint8Array = reader.push(result.chunks[0]);
const next: Uint8Array = reader.read();
reader.finish();
reader.free();

try {
  split({ pk: { S: 'a' } }, table);
} catch (error) {
  const e = error as DynasliceError;
  if (e.name === 'DynasliceError') console.log(e.code, e.message, e.violations?.length);
}

const number = new NumberValue(12345678901234567890n);
const text: string = number.value;
const value: AttributeValue = { NS: [number.toString(), String(new NumberValue(2))] };

// Mistakes the types catch.
// @ts-expect-error a table needs its key
split(typed, { table: 'docs' });
// @ts-expect-error there is no lz4
compress(raw, { codec: 'lz4' });
// @ts-expect-error a format is "dynamodb" or "plain"
itemSize(typed, { format: 'json' });
// @ts-expect-error key types are S, N or B
validateItem(typed, { key: [{ name: 'pk', type: 'BOOL' }] });
// @ts-expect-error streaming compresses with the deflate family only
new Splitter(typed, { ...table, attribute: 'data', size: 1, codec: 'zstd' });
// @ts-expect-error modes are auto, atomic and batch
split(typed, { ...table, mode: 'single' });
// @ts-expect-error a version id is text
carriesVersion(result.parent, 1);
// @ts-expect-error chunkData takes one item, not the list
chunkData(again.chunks);
// @ts-expect-error a ChunkReader reads one named attribute
new ChunkReader(result.parent, table);

console.log(size, plainSize, units, cleanup, notStored, data, limit, back, typedBack, consistent, readUnits, received, ready, finished, streamed, text, value, chunkCount, readFrom, keys, known, first, next);
