// What a table needs kept on every parent: the key attributes of its global
// and local secondary indexes, so items stay in their indexes, and its TTL
// attribute, which every chunk carries too, so chunks expire with their
// parent. Read once per client and table (DescribeTable, DescribeTimeToLive),
// as the host reads them; given explicitly (`indexKeys`, `ttl`) they are
// not read, for a caller whose role may not describe tables.

import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { POLICY } from '../../dist/policy.js';
import { dynasliceError } from '../error.js';

const THROTTLED = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'LimitExceededException']);

/** True for a failure worth another attempt: throttling, a server error, or no answer. */
function transient(error) {
  const status = error?.$metadata?.httpStatusCode;
  return THROTTLED.has(error?.name) || status === undefined || status >= 500;
}

/** `command`'s answer, resent with the core's backoff while it fails transiently. */
async function sendRetrying(client, command) {
  const { maxAttempts, maxThrottledAttempts, baseDelayMs, maxDelayMs } = POLICY.retry;
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.send(command);
    } catch (error) {
      const most = THROTTLED.has(error?.name) ? maxThrottledAttempts : maxAttempts;
      if (!transient(error) || attempt >= most) throw error;
      const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempt, 16));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
    }
  }
}

/** client → Map(table → Promise of { indexKeys, ttl }). */
const described = new WeakMap();

/**
 * `options` with `indexKeys` and `ttl` filled in from the table's description
 * when the caller gave neither.
 */
export async function withTableKeys(client, options) {
  if (options?.indexKeys !== undefined || options?.ttl !== undefined || typeof options?.table !== 'string') return options;
  let tables = described.get(client);
  if (tables === undefined) {
    tables = new Map();
    described.set(client, tables);
  }
  let found = tables.get(options.table);
  if (found === undefined) {
    found = describe(client, options.table, options.key);
    tables.set(options.table, found);
    // A failure is not remembered: the next call asks again.
    found.catch(() => tables.delete(options.table));
  }
  return { ...options, ...(await found) };
}

async function describe(client, table, key) {
  let description;
  let ttl;
  try {
    ({ Table: description } = await sendRetrying(client, new DescribeTableCommand({ TableName: table })));
    ({ TimeToLiveDescription: ttl } = await sendRetrying(client, new DescribeTimeToLiveCommand({ TableName: table })));
  } catch (error) {
    if (error?.name === 'ResourceNotFoundException') throw dynasliceError('TABLE_NOT_FOUND', `table ${table} does not exist (${error.message})`);
    throw dynasliceError(
      'TABLE_UNSUPPORTED',
      `cannot describe table ${table} for its index keys and TTL attribute (${error?.name ?? 'Error'}: ${error?.message}); give options indexKeys and ttl (null for none) to skip describing it`,
    );
  }
  const primary = new Set((Array.isArray(key) ? key : []).map((k) => k?.name));
  const types = new Map((description?.AttributeDefinitions ?? []).map((d) => [d.AttributeName, d.AttributeType]));
  const indexKeys = new Map();
  // The anchors index (docs/FORMAT.md §6) is dynaslice's own: no item of the caller's holds `_da`.
  const anchors = (index) => index.IndexName === 'dynaslice-anchors' && index.KeySchema?.[0]?.AttributeName === '_da';
  const globals = (description?.GlobalSecondaryIndexes ?? []).filter((index) => !anchors(index));
  const indexes = [...globals, ...(description?.LocalSecondaryIndexes ?? [])];
  for (const element of indexes.flatMap((index) => index.KeySchema ?? [])) {
    const name = element.AttributeName;
    if (primary.has(name)) continue;
    const sort = element.KeyType !== 'HASH';
    const known = indexKeys.get(name);
    if (known) known.sort ||= sort;
    else indexKeys.set(name, { name, type: types.get(name) ?? 'S', sort });
  }
  const on = ttl?.TimeToLiveStatus === 'ENABLED' || ttl?.TimeToLiveStatus === 'ENABLING';
  return { indexKeys: [...indexKeys.values()], ttl: on ? ttl.AttributeName : null };
}
