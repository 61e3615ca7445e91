// Sends the requests the core plans, the way the host's send.rs and
// retry.rs do: every request retried on throttling, server errors and
// dropped connections with bounded exponential backoff and full jitter;
// UnprocessedItems and UnprocessedKeys resent until none are left; batches
// in flight as a pace that adapts to throttling allows (pace.js); the
// capacity each answer reports, summed; and the store's time read from each
// answer's Date header.

import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { badOption, dynasliceError } from '../error.js';
import { StoreClock, observeDate } from './clock.js';
import { Pace } from './pace.js';

/**
 * The host's RetryPolicy default: 10 attempts (50 while DynamoDB throttles:
 * a busy table or partition clears in seconds), 25 ms doubling to at most 2 s.
 */
export const DEFAULT_RETRY = Object.freeze({ maxAttempts: 10, maxThrottledAttempts: 50, baseDelayMs: 25, maxDelayMs: 2000 });

/**
 * The most batch requests in flight at once for one operation (the host's
 * DEFAULT_CONCURRENCY): the pace starts at 4 and adapts between 1 and this.
 */
export const DEFAULT_CONCURRENCY = 16;

/** DynamoDB error names that mean "try again later" (the host's TRANSIENT_CODES). */
const TRANSIENT = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TransactionInProgressException',
]);

/** Error names of a request DynamoDB refused before carrying it out (throttling). */
const THROTTLED = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

/**
 * True when the request was throttled: it was not carried out. Only these
 * errors may resend a last-writer-wins commit; any other transient failure
 * (a 500, a lost connection) may come after the write was applied.
 */
function throttled(error) {
  return THROTTLED.has(error?.name);
}

/** Cancellation reasons of a transaction that a resend may clear. */
const TRANSIENT_CANCEL = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/** A positive integer option, `fallback` when absent. */
function count(options, name, fallback) {
  const value = options?.[name];
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw badOption(name, 'a positive integer');
  return value;
}

/** `options.retry`, checked: `{ maxAttempts, baseDelayMs, maxDelayMs }`. */
function retryPolicy(options) {
  const retry = options?.retry;
  if (retry === undefined) return DEFAULT_RETRY;
  if (retry === null || typeof retry !== 'object') throw badOption('retry', 'an object like { maxAttempts, baseDelayMs, maxDelayMs }');
  const delay = (name) => {
    const value = retry[name] ?? DEFAULT_RETRY[name];
    if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) throw badOption(`retry.${name}`, 'a number of milliseconds, 0 or more');
    return value;
  };
  return {
    maxAttempts: count(retry, 'maxAttempts', DEFAULT_RETRY.maxAttempts),
    maxThrottledAttempts: count(retry, 'maxThrottledAttempts', DEFAULT_RETRY.maxThrottledAttempts),
    baseDelayMs: delay('baseDelayMs'),
    maxDelayMs: delay('maxDelayMs'),
  };
}

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
 * `maxAttempts`): a middleware inside the retry middleware (finalizeRequest,
 * low priority) wraps each attempt's failure so the SDK does not resend it.
 * For a write that must not be sent twice after an ambiguous failure.
 */
function withoutSdkRetries(command) {
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
  return command;
}

/** True when the error is the caller's AbortSignal firing. */
function aborted(error, signal) {
  return signal?.aborted === true || error?.name === 'AbortError';
}

/** True for an error a resend of the same request may clear. */
function transient(error) {
  if (TRANSIENT.has(error?.name)) return true;
  const status = error?.$metadata?.httpStatusCode;
  if (typeof status === 'number') return status >= 500;
  // No HTTP answer at all: a reset, refused or timed-out connection.
  return error instanceof Error;
}

/** The reasons a TransactionCanceledException gives, one per action. */
function cancelReasons(error) {
  return error?.name === 'TransactionCanceledException' ? (error.CancellationReasons ?? []).map((r) => r?.Code ?? 'None') : [];
}

/** The typed error a request ends with once retries ran out or it failed for good. */
function failure(operation, error, attempts) {
  const name = error?.name ?? 'Error';
  const said = `${operation} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${name}: ${error?.message ?? String(error)}`;
  let code = 'DYNAMODB_ERROR';
  if (name === 'ResourceNotFoundException') code = 'TABLE_NOT_FOUND';
  else if (name === 'ValidationException') code = 'DYNAMODB_VALIDATION';
  else if (typeof error?.$metadata?.httpStatusCode !== 'number') code = 'CONNECTION_FAILED';
  const typed = dynasliceError(code, said);
  typed.cause = error;
  return typed;
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

/** Runs `work` on each of `inputs`, at most `limit` at once; rejects with the first failure. */
export async function inParallel(inputs, limit, work) {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < inputs.length) {
      const input = inputs[next++];
      try {
        await work(input);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, inputs.length) }, lane));
}

/** How many requests a BatchWriteItem's or BatchGetItem's RequestItems hold. */
function requestCount(requestItems, keys) {
  let n = 0;
  for (const entry of Object.values(requestItems ?? {})) n += keys ? (entry?.Keys?.length ?? 0) : (entry?.length ?? 0);
  return n;
}

/** One operation's sender: its client, retry policy, pace, signal, capacity and clock. */
export class Sender {
  /** Capacity units the answers reported (ReturnConsumedCapacity TOTAL). */
  consumed = { readUnits: 0, writeUnits: 0 };
  clock = new StoreClock();

  constructor(client, options) {
    if (client === null || typeof client !== 'object' || typeof client.send !== 'function') {
      throw dynasliceError('OPTIONS_INVALID', 'client must be a DynamoDBClient (or DynamoDBDocumentClient) from @aws-sdk/client-dynamodb');
    }
    this.client = client;
    this.retry = retryPolicy(options);
    this.concurrency = count(options, 'concurrency', DEFAULT_CONCURRENCY);
    this.pace = new Pace(this.concurrency);
    this.signal = options?.signal;
    if (this.signal !== undefined && (this.signal === null || typeof this.signal.aborted !== 'boolean')) throw badOption('signal', 'an AbortSignal');
  }

  /** Throws the signal's reason if it fired. */
  checkAborted() {
    if (this.signal?.aborted) throw this.signal.reason;
  }

  /** A random delay up to the ceiling for retry `n` (from 0): full jitter. */
  backoff(n) {
    const { baseDelayMs, maxDelayMs } = this.retry;
    return Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(n, 30));
  }

  /**
   * Sends `new Command(input)` until it succeeds, fails for good, or
   * attempts run out (`maxThrottledAttempts` while it is throttled).
   * `retryIf(error)` picks the errors to resend (default: transient ones).
   * With `partial(output)` (a batch: true when it left something
   * unprocessed) each attempt waits for a place in the pace and tells it
   * how the answer went. Resolves to the output; adds its capacity.
   */
  async send(Command, input, kind, retryIf = transient, { sdkRetries = true, partial } = {}) {
    const operation = Command.name.replace(/Command$/, '');
    const request = { ...input, ReturnConsumedCapacity: 'TOTAL' };
    for (let attempt = 1; ; attempt++) {
      this.checkAborted();
      const permit = partial ? await this.pace.acquire() : undefined;
      try {
        const command = observeDate(new Command(request), this.clock);
        const output = await this.client.send(sdkRetries ? command : withoutSdkRetries(command), { abortSignal: this.signal });
        permit?.done(partial(output) ? 'throttled' : 'clean');
        this.#add(kind, output.ConsumedCapacity);
        return output;
      } catch (caught) {
        const error = caught instanceof SdkRetriesOff ? caught.original : caught;
        permit?.done(throttled(error) ? 'throttled' : 'other');
        if (aborted(error, this.signal)) throw this.signal?.reason ?? error;
        const attempts = throttled(error) ? this.retry.maxThrottledAttempts : this.retry.maxAttempts;
        if (attempt >= attempts || !retryIf(error)) throw failure(operation, error, attempt);
        await sleep(this.backoff(attempt - 1), this.signal);
      }
    }
  }

  #add(kind, consumed) {
    for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
      const units = c.CapacityUnits ?? (kind === 'read' ? c.ReadCapacityUnits : c.WriteCapacityUnits) ?? 0;
      this.consumed[kind === 'read' ? 'readUnits' : 'writeUnits'] += units;
    }
  }

  /** GetItem: the item, or undefined. */
  async get(input) {
    return (await this.send(GetItemCommand, input, 'read')).Item;
  }

  /** A conditional PutItem or DeleteItem: true when written, false when the condition failed. */
  async conditional(Command, input) {
    try {
      await this.send(Command, input, 'write');
      return true;
    } catch (error) {
      if (error.cause?.name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }

  put(input) {
    return this.conditional(PutItemCommand, input);
  }

  /**
   * An unconditional PutItem with `ReturnValues: 'ALL_OLD'`: resolves to
   * the item it replaced (undefined when none). `resend` is `'transient'`
   * (any transient failure: the write is harmless to apply twice) or
   * `'unapplied'` (only throttling: a resend of a write that may have been
   * applied could land after a later writer's commit). Resolves to
   * `{ old }` once written, or `{ error, maybeApplied }` once it failed for
   * good: `maybeApplied` is false only when the write surely was not
   * applied (throttled, or refused as invalid).
   */
  async putReturningOld(input, resend) {
    try {
      const retryIf = resend === 'transient' ? transient : throttled;
      // The SDK's own retries would resend it after a 5xx or a reset: this loop alone decides.
      return { old: (await this.send(PutItemCommand, input, 'write', retryIf, { sdkRetries: resend === 'transient' })).Attributes };
    } catch (error) {
      if (aborted(error, this.signal)) return { error, maybeApplied: true };
      const cause = error?.cause ?? error;
      return { error, maybeApplied: transient(cause) && !throttled(cause) };
    }
  }

  delete(input) {
    return this.conditional(DeleteItemCommand, input);
  }

  /**
   * TransactWriteItems under `token` (its ClientRequestToken: a resend of an
   * applied transaction is a no-op, not a second write). True when
   * written, false when a condition failed.
   */
  async transact(input, token) {
    const retryIf = (error) => transient(error) || cancelReasons(error).some((r) => TRANSIENT_CANCEL.has(r));
    try {
      await this.send(TransactWriteItemsCommand, { ...input, ClientRequestToken: token }, 'write', retryIf);
      return true;
    } catch (error) {
      if (cancelReasons(error.cause).includes('ConditionalCheckFailed')) return false;
      throw error;
    }
  }

  /**
   * Rounds of a batch request until nothing is left unprocessed. A round
   * that made progress resets the count; `maxThrottledAttempts` rounds in a
   * row without any (the table or partition is busy) is a failure.
   * `left(output)` gives what is left.
   */
  async #rounds(Command, requestItems, kind, left, onRound) {
    const operation = Command.name.replace(/Command$/, '');
    const keys = kind === 'read';
    const unprocessed = (output) => Object.fromEntries(Object.entries(left(output) ?? {}).filter(([, v]) => requestCount({ v }, keys) > 0));
    const partial = (output) => requestCount(unprocessed(output), keys) > 0;
    let pending = requestItems;
    for (let stalled = 0; requestCount(pending, keys) > 0; ) {
      const output = await this.send(Command, { RequestItems: pending }, kind, transient, { partial });
      onRound?.(output);
      const rest = unprocessed(output);
      const progressed = requestCount(rest, keys) < requestCount(pending, keys);
      stalled = progressed ? 0 : stalled + 1;
      if (requestCount(rest, keys) > 0) {
        if (stalled >= this.retry.maxThrottledAttempts) {
          throw dynasliceError('DYNAMODB_ERROR', `${operation}: ${requestCount(rest, keys)} requests still unprocessed after ${stalled} rounds without progress`);
        }
        await sleep(this.backoff(stalled), this.signal);
      }
      pending = rest;
    }
  }

  /** One BatchWriteItem, resending UnprocessedItems. */
  batchWrite(input) {
    return this.#rounds(BatchWriteItemCommand, input.RequestItems, 'write', (o) => o.UnprocessedItems);
  }

  /** BatchWriteItems, as many at once as the pace allows; `onDone(input)` after each. */
  batchWrites(inputs, onDone) {
    return inParallel(inputs, this.pace.max, async (input) => {
      await this.batchWrite(input);
      onDone?.(input);
    });
  }

  /** One BatchGetItem, resending UnprocessedKeys; resolves to the items read. */
  async batchGet(input) {
    const items = [];
    await this.#rounds(
      BatchGetItemCommand,
      input.RequestItems,
      'read',
      (o) => o.UnprocessedKeys,
      (o) => {
        for (const found of Object.values(o.Responses ?? {})) items.push(...found);
      },
    );
    return items;
  }

  /** BatchGetItems, as many at once as the pace allows; resolves to every item read. `onItems(items)` as each completes. */
  async batchGets(inputs, onItems) {
    const all = [];
    await inParallel(inputs, this.pace.max, async (input) => {
      const items = await this.batchGet(input);
      all.push(...items);
      onItems?.(items);
    });
    return all;
  }

  /** Every page of a Scan, each passed to `onPage(items)`. */
  async scan(input, onPage) {
    let start;
    do {
      const output = await this.send(ScanCommand, { ...input, ExclusiveStartKey: start }, 'read');
      await onPage(output.Items ?? []);
      start = output.LastEvaluatedKey;
    } while (start !== undefined);
  }
}
