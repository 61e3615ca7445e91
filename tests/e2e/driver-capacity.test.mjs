// dynaslice/dynamodb under DynamoDB's throughput limits: the host's capacity
// model (host/examples/capacity_model.rs) in throttle mode in front of
// Amazon's DynamoDB Local refuses what is over a partition's or a table's
// rate with ProvisionedThroughputExceededException / ThrottlingException and
// hands back the part of a batch over it, as DynamoDB does. The SDK's own
// retries are off (maxAttempts 1): the driver's pace and retries alone must
// carry a write that takes seconds of one partition's capacity, and read it
// back whole. Needs Java and the host's examples (buildHost).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { getItem, putItem } from 'dynaslice/dynamodb';
import { startDynamoDBLocal } from '../js/support/dynamodb-local.mjs';
import { startCapacityModel } from './support/capacity-model.mjs';

const MB = 1024 * 1024;
/** Chunks beside the parent: one partition key value, 1,000 write units a second. */
const APP = { table: 'app', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }], layout: 'collection', format: 'plain' };

let server;
let model;
let client;

before(async () => {
  server = await startDynamoDBLocal();
  await server.client().send(
    new CreateTableCommand({
      TableName: 'app',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
  // No latency: the limits, not the delay, are under test.
  model = await startCapacityModel(server.endpoint, ['--mode', 'throttle', '--latency-ms', '0', '--latency-us-per-kib', '0']);
  client = new DynamoDBClient({
    endpoint: model.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'dynaslice', secretAccessKey: 'dynaslice' },
    maxAttempts: 1,
  });
});

after(async () => {
  client?.destroy();
  await model?.stop();
  await server?.stop();
});

test('a 6 MB put into one partition is throttled for seconds, and goes in whole', { timeout: 120_000 }, async () => {
  const data = new Uint8Array(randomBytes(6 * MB));
  const key = { pk: 'hot', sk: 'item' };
  await model.empty();
  const started = Date.now();
  const put = await putItem(client, { ...key, data }, APP);
  const seconds = (Date.now() - started) / 1000;
  const counts = await model.counts();
  // ~6,300 write units at 1,000 a second (one second of burst, the
  // bucket starting empty): over 5 s, throttled all along the way.
  assert.ok(seconds > 4, `the put took ${seconds} s`);
  assert.ok(counts.throttledPartition + counts.partialBatches > 10, JSON.stringify(counts));
  assert.equal(put.manifest.chunkCount, 16);
  const { item } = await getItem(client, key, APP);
  assert.ok(Buffer.from(item.data).equals(Buffer.from(data)), 'read back whole');
});
