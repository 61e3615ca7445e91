// A user's TypeScript for `dynaslice/dynamodb`: every export of the driver
// with its options, checked by `tsc --noEmit` (tests/js/types.test.mjs)
// against the package's dynamodb.d.ts, with the real SDK clients' types.
// Lines marked @ts-expect-error must stay errors.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_CONCURRENCY, DEFAULT_GRACE_MS, DEFAULT_RETRY, DEFAULT_WINDOW, deleteItem, gc, getItem, getStream, listVersions, putItem, putItems, putStream, queryItems, restoreVersion, updateItem } from 'dynaslice/dynamodb';
import type { GcReport, GetResult, PutProgress, PutResult, UpdateResult, Versions } from 'dynaslice/dynamodb';

const client = new DynamoDBClient({});
const doc = DynamoDBDocumentClient.from(client);
const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] } as const;
const controller = new AbortController();

export async function use(): Promise<void> {
  const seen: PutProgress[] = [];
  const put: PutResult = await putItem(client, { pk: { S: 'a' }, data: { B: new Uint8Array(8) } }, {
    ...table,
    mode: 'batch',
    codec: 'zstd',
    keep: ['gsi1'],
    expect: 'absent',
    concurrency: 8,
    retry: { maxAttempts: 5, baseDelayMs: 50, maxDelayMs: 1000 },
    signal: controller.signal,
    onProgress: (p) => seen.push(p),
  });
  const replaced: PutResult = await putItem(doc, { pk: 'a', n: 1 }, { ...table, format: 'plain', expect: { version: put.version ?? '' } });
  const streamed: PutResult = await putStream(client, new Blob([new Uint8Array(4)]), { pk: { S: 'f' } }, {
    ...table,
    attribute: 'file',
    codec: 'gzip',
    onProgress: ({ bytesRead, totalBytes }) => console.log(bytesRead, totalBytes),
  });
  const got: GetResult = await getItem(client, { pk: { S: 'a' } }, { ...table, consistentRead: false, onProgress: ({ chunksRead, chunks }) => console.log(chunksRead, chunks) });
  const plain = await getItem(doc, { pk: 'a' }, { ...table, format: 'plain', wrapNumbers: true });
  const stream: ReadableStream<Uint8Array> = await getStream(client, { pk: { S: 'f' } }, { ...table, attribute: 'file', window: 8, onProgress: ({ bytesRead, totalBytes }) => console.log(bytesRead, totalBytes ?? 0) });
  const reader = stream.getReader();
  const first = await reader.read();
  console.log(first.done ? 0 : first.value.byteLength);
  const updated: UpdateResult = await updateItem(client, { pk: { S: 'a' } }, { set: { status: { S: 'done' } }, remove: ['draft'] }, { ...table, dryRun: true });
  console.log(updated.path === 'parent' ? updated.writeUnits : updated.put?.version, updated.consumed.writeUnits);
  for await (const item of queryItems(client, { KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } } }, { ...table, itemConcurrency: 2 })) {
    console.log(item);
  }
  const pages = queryItems(doc, { IndexName: 'gsi1', KeyConditionExpression: 'g = :g', ExpressionAttributeValues: { ':g': 'x' } }, { ...table, format: 'plain', lazy: true });
  const last = await pages.next();
  console.log(last.done ? last.value.chunksSkipped : last.value);
  const kept: PutResult = await putItem(client, { pk: { S: 'h' }, body: { S: 'x' } }, { ...table, history: { keep: 3, maxAgeMs: 86_400_000 }, note: 'by ana' });
  const listed: Versions | undefined = await listVersions(client, { pk: { S: 'h' } }, table);
  const old = await getItem(client, { pk: { S: 'h' } }, { ...table, version: listed?.versions[1]?.version ?? '' });
  const restored: PutResult = await restoreVersion(doc, { pk: 'h' }, kept.version ?? '', { ...table, format: 'plain', note: 'undo' });
  console.log(listed?.retention?.keep, listed?.versions.map((v) => [v.version, v.replacedAt, v.note]), old.item, restored.version, 0);
  const loaded = await putItems(client, [{ pk: { S: 'a' } }], { ...table, inFlight: 4, onProgress: ({ written, failed }) => console.log(written, failed) });
  console.log(loaded.written, loaded.failed.map((f) => f.index), loaded.consumed.writeUnits);
  const gone = await deleteItem(client, { pk: { S: 'a' } }, { ...table, signal: controller.signal });
  const report: GcReport = await gc(client, { ...table, graceMs: 60_000, dryRun: true, segments: 4, maxUnitsPerSecond: 500, onProgress: ({ chunks, deleted }) => console.log(chunks, deleted) });
  console.log(seen, replaced.mode, streamed.cleanupLeft, got.item, got.version, plain.consumed.readUnits, gone.chunksLeft, report.unreadableParents);
  console.log(DEFAULT_CONCURRENCY, DEFAULT_GRACE_MS, DEFAULT_RETRY.maxAttempts, DEFAULT_WINDOW);

  // Mistakes the types catch.
  // @ts-expect-error expect is 'absent' or a version
  await putItem(client, { pk: { S: 'a' } }, { ...table, expect: 'any' });
  // @ts-expect-error putStream needs the attribute
  await putStream(client, new Blob([]), { pk: { S: 'f' } }, table);
  // @ts-expect-error a client is needed
  await getItem({ pk: { S: 'a' } }, table);
  // @ts-expect-error getStream needs the attribute
  await getStream(client, { pk: { S: 'f' } }, table);
  // @ts-expect-error remove takes names
  await updateItem(client, { pk: { S: 'a' } }, { remove: 'draft' }, table);
  // @ts-expect-error a query's input is an object
  queryItems(client, 'pk = :p', table);
  // @ts-expect-error history keeps a number of versions
  await putItem(client, { pk: { S: 'h' } }, { ...table, history: { keep: 'all' } });
  // @ts-expect-error retry attempts are a number
  await gc(client, { ...table, retry: { maxAttempts: 'many' } });
}
