// Storing and reading items of any size with @aws-sdk/client-dynamodb and
// dynaslice's driver: the calls an application writes. Run it against any
// DynamoDB-compatible server that has the tables `docs` and `docs_chunks`
// (partition key `pk`, a string), for example Amazon's DynamoDB Local:
//
//   DYNAMODB_ENDPOINT=http://127.0.0.1:8000 node examples/sdk.mjs
//
// tests/js/dynamodb-local.test.mjs runs it so.
import { isDeepStrictEqual } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { deleteItem, getItem, putItem } from 'dynaslice/dynamodb';

const client = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
// Chunks go to `docs_chunks` (the default chunk table of `docs`); items are plain values.
const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }], format: 'plain' };

// A 6 MB document: 15 times DynamoDB's item limit.
const words = () => Array.from({ length: 40 }, () => Math.random().toString(36).slice(2, 8)).join(' ');
const report = { pk: 'report#2026', title: 'Yearly report', pages: Array.from({ length: 20_000 }, (_, i) => `page ${i}: ${words()}`) };

const written = await putItem(client, report, {
  ...table,
  onProgress: ({ bytesWritten, totalBytes }) => process.stderr.write(`\rwriting ${bytesWritten} of ${totalBytes} bytes`),
});
console.error('');
console.log(`stored ${report.pk} (${written.mode}, ${written.manifest?.chunkCount ?? 0} chunks, ${written.writeUnits} write units)`);

const { item } = await getItem(client, { pk: 'report#2026' }, table);
console.log(`read it back: ${item.pages.length} pages, identical: ${isDeepStrictEqual(item, report)}`);

const { chunksDeleted } = await deleteItem(client, { pk: 'report#2026' }, table);
console.log(`deleted it and its ${chunksDeleted} chunks`);
client.destroy();
