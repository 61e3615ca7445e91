// Writing and reading items of any size with @aws-sdk/client-dynamodb alone:
// dynaslice plans the requests, this file sends them. Tested against Amazon's
// DynamoDB Local by tests/js/dynamodb-local.test.mjs.
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { carriesVersion, parentRequest, readRequests, reassemble, split } from 'dynaslice';

const MAX_ATTEMPTS = 8;

/** Bounded exponential backoff with full jitter. */
const backoff = (attempt) => new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * 2 ** attempt));

/** Sends one BatchWriteItem, retrying UnprocessedItems until none are left. */
export async function writeAll(client, input) {
  let request = input.RequestItems;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const { UnprocessedItems } = await client.send(new BatchWriteItemCommand({ RequestItems: request }));
    if (!UnprocessedItems || Object.keys(UnprocessedItems).length === 0) return;
    request = UnprocessedItems;
    await backoff(attempt);
  }
  throw new Error('BatchWriteItem: items still unprocessed after retries');
}

/** Sends one BatchGetItem, retrying UnprocessedKeys; returns every item read. */
export async function readAll(client, input) {
  const items = [];
  let request = input.RequestItems;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const { Responses, UnprocessedKeys } = await client.send(new BatchGetItemCommand({ RequestItems: request }));
    for (const found of Object.values(Responses ?? {})) items.push(...found);
    if (!UnprocessedKeys || Object.keys(UnprocessedKeys).length === 0) return items;
    request = UnprocessedKeys;
    await backoff(attempt);
  }
  throw new Error('BatchGetItem: keys still unprocessed after retries');
}

/**
 * Writes `item` (in `table.format`), replacing whatever version is stored.
 * Returns the write capacity the write consumed by dynaslice's plan.
 */
export async function putLarge(client, table, item) {
  // Only the key: converting a whole large item just to read its key is slow.
  const key = Object.fromEntries(table.key.filter(({ name }) => name in item).map(({ name }) => [name, item[name]]));
  const { Item: stored } = await client.send(new GetItemCommand(parentRequest(key, table)));
  const { requests, writeUnits, manifest } = split(item, { ...table, expect: stored ?? 'absent' });
  // Exactly one of putItem, transactWriteItems or commit (after its batches) is present.
  if (requests.putItem) await client.send(new PutItemCommand(requests.putItem));
  // The SDK gives TransactWriteItems a ClientRequestToken, so its own retries are idempotent.
  if (requests.transactWriteItems) await client.send(new TransactWriteItemsCommand(requests.transactWriteItems));
  if (requests.commit) {
    await Promise.all(requests.batchWriteItems.map((batch) => writeAll(client, batch)));
    try {
      await client.send(new PutItemCommand(requests.commit)); // the commit point
    } catch (error) {
      if (error.name !== 'ConditionalCheckFailedException') throw error; // chunks are left to gc
      // The condition failed: either we lost a race, or the SDK retried a commit
      // whose first attempt succeeded (a timeout or reset after the server wrote
      // it). Only in the first case are our chunks unreferenced: check before
      // deleting them, or a committed item would lose its chunks. A parent
      // whose manifest cannot be read throws here: the chunks are left to gc.
      const { Item: now } = await client.send(new GetItemCommand(parentRequest(key, table)));
      if (!carriesVersion(now, manifest.version)) {
        await Promise.all(requests.abort.map((batch) => writeAll(client, batch)));
        throw error;
      }
    }
  }
  await Promise.all(requests.cleanup.map((batch) => writeAll(client, batch)));
  return writeUnits;
}

/**
 * Reads the item with `key` (in `table.format`), or undefined when absent.
 * A chunk that vanished means a concurrent overwrite replaced the version
 * being read: read the new parent and try again.
 */
export async function getLarge(client, table, key) {
  for (let attempt = 0; ; attempt++) {
    const { Item: parent } = await client.send(new GetItemCommand(parentRequest(key, table)));
    if (!parent) return undefined;
    const { batchGetItems } = readRequests(parent, table);
    const chunks = (await Promise.all(batchGetItems.map((batch) => readAll(client, batch)))).flat();
    try {
      return reassemble(parent, chunks, table);
    } catch (error) {
      if (error.code !== 'CHUNK_MISSING' || attempt + 1 >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
    }
  }
}
