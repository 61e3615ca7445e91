// Sends one request a protocol machine asked for, once, with
// @aws-sdk/client-dynamodb (or, for an S3 request, @aws-sdk/client-s3:
// s3.js), and reports what came back as facts: the
// answer's items (as value streams, for the machine to read), or the
// failure's HTTP status, code and transaction reasons; with the capacity
// it consumed and the store's `Date`. Nothing is decided here: which
// failures are worth another attempt, after how long, and how many
// requests fly are the core's (wasm/src/machine.rs). The SDK's own retries
// are off for every request, so the machine sees every failure.

import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DYNAMODB_INPUT, encodeItem, encodeItems } from '../encode.js';

const COMMANDS = {
  GetItem: GetItemCommand,
  PutItem: PutItemCommand,
  DeleteItem: DeleteItemCommand,
  UpdateItem: UpdateItemCommand,
  TransactWriteItems: TransactWriteItemsCommand,
  BatchWriteItem: BatchWriteItemCommand,
  BatchGetItem: BatchGetItemCommand,
  Scan: ScanCommand,
  Query: QueryCommand,
};

/**
 * A failure carried past the SDK's retry middleware, which classifies it as
 * a client error and so never resends the request; `send` unwraps it.
 */
class SdkRetriesOff extends Error {
  constructor(original) {
    super(original?.message ?? String(original));
    this.name = 'DynasliceSdkRetriesOff';
    this.original = original;
  }
}

/**
 * `command` with the SDK's own retries off (whatever the client's
 * `maxAttempts`) and each answer's `Date` header kept in `seen.date`.
 */
function prepared(command, seen) {
  command.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        throw new SdkRetriesOff(error);
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'dynasliceSdkRetriesOff' },
  );
  command.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      seen.date = result.response?.headers?.date;
      return result;
    },
    { step: 'deserialize', name: 'dynasliceStoreDate', override: true },
  );
  return command;
}

/** Resolves after `ms`, or rejects with the signal's reason when it fires first. */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    const timer = setTimeout(done, ms);
    function stop() {
      clearTimeout(timer);
      reject(signal.reason);
    }
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/** Capacity units an answer's ConsumedCapacity reports, summed over its tables. */
function consumed(output) {
  const list = Array.isArray(output?.ConsumedCapacity) ? output.ConsumedCapacity : output?.ConsumedCapacity ? [output.ConsumedCapacity] : [];
  return list.reduce((sum, c) => sum + (c?.CapacityUnits ?? 0), 0);
}

const optional = (item) => (item === undefined || item === null ? undefined : encodeItem(item, DYNAMODB_INPUT));
const many = (items, what) => encodeItems(items, DYNAMODB_INPUT, what);

/** The answer of `operation` as the machine reads it: its items as value streams. */
function answerOf(operation, output) {
  switch (operation) {
    case 'GetItem':
      return { item: optional(output.Item) };
    case 'PutItem':
      return { old: optional(output.Attributes) };
    case 'BatchWriteItem': {
      const items = [];
      const tables = [];
      const deletes = [];
      for (const [table, requests] of Object.entries(output.UnprocessedItems ?? {})) {
        for (const request of requests ?? []) {
          const item = request?.PutRequest?.Item ?? request?.DeleteRequest?.Key;
          if (item === undefined) continue;
          items.push(item);
          tables.push(table);
          deletes.push(request.PutRequest === undefined);
        }
      }
      return items.length === 0 ? {} : { unprocessed: { ...many(items, 'unprocessed requests'), tables, deletes } };
    }
    case 'BatchGetItem':
      return {
        items: many(Object.values(output.Responses ?? {}).flat(), 'items'),
        unprocessed: many(Object.values(output.UnprocessedKeys ?? {}).flatMap((k) => k?.Keys ?? []), 'keys'),
      };
    case 'Query':
    case 'Scan': {
      const next = output.LastEvaluatedKey;
      return { items: many(output.Items ?? [], 'items'), next: next && Object.keys(next).length > 0 ? optional(next) : undefined };
    }
    default:
      return {};
  }
}

/** The facts of a failed request: its HTTP status (none when no answer came), code, message and reasons. */
function factsOf(error) {
  const status = error?.$metadata?.httpStatusCode;
  return {
    status: typeof status === 'number' ? status : undefined,
    code: error?.name ?? 'Error',
    message: error?.message ?? String(error),
    reasons: error?.name === 'TransactionCanceledException' ? (error.CancellationReasons ?? []).map((r) => r?.Code ?? 'None') : [],
  };
}

/** DynamoDB's commands, and what the machine reads off their answers. */
const DYNAMODB = {
  command: (operation, input) => new COMMANDS[operation]({ ...input, ReturnConsumedCapacity: 'TOTAL' }),
  call: (client, command, signal) => client.send(command, { abortSignal: signal }),
  answer: (operation, output) => ({ ...answerOf(operation, output), consumed: consumed(output) }),
};

/**
 * Sends the request of a `send` step (after its delay) with `client`, a
 * client of `service` (DynamoDB's unless given: `{ command, call, answer
 * }`, see s3.js), and resolves to `{ id, response }`, never rejecting: a
 * failure is a response too.
 */
export async function send(client, step, signal, service = DYNAMODB) {
  const seen = {};
  let response;
  try {
    if (step.delayMs > 0) await sleep(step.delayMs, signal);
    const command = prepared(await service.command(step.operation, step.input), seen);
    const output = await service.call(client, command, signal);
    try {
      response = service.answer(step.operation, output);
    } catch (error) {
      // Carried out, but its answer holds what no item can: applied, unreadable.
      response = { failure: { status: 200, code: error?.code ?? 'UnreadableAnswer', message: error?.message ?? String(error), reasons: [] } };
    }
  } catch (caught) {
    const error = caught instanceof SdkRetriesOff ? caught.original : caught;
    response = { failure: factsOf(error) };
  }
  const dateMs = Date.parse(seen.date);
  return { id: step.id, response: { ...response, dateMs: Number.isNaN(dateMs) ? undefined : dateMs, localMs: Date.now() } };
}
