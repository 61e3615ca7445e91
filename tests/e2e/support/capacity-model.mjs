// The host's DynamoDB capacity model (host/examples/capacity_model.rs) in
// front of a DynamoDB-compatible server, for tests of the npm package's
// driver under DynamoDB's throughput limits: per partition key value and per
// table, refused with DynamoDB's errors and partial batches in throttle mode.
import { startProxyProcess } from './proxy-process.mjs';

/**
 * Starts the model in front of `upstream` (`http://127.0.0.1:PORT`) with
 * `flags` (`['--mode', 'throttle', ...]`, see the program's docs);
 * `counts()` resolves to what it metered and refused so far.
 */
export async function startCapacityModel(upstream, flags = []) {
  const model = await startProxyProcess('capacity_model', [new URL(upstream).host, ...flags], 'capacity model listening');
  return {
    endpoint: model.endpoint,
    empty: () => model.command('empty'),
    counts: async () => JSON.parse(await model.command('counts')),
    stop: () => model.stop(),
  };
}
