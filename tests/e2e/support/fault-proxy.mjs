// The host's fault-injecting proxy (host/examples/fault_proxy.rs, the
// proxy of the host's own fault tests) in front of a DynamoDB-compatible
// server, for tests of the npm package's driver: it meets exactly the
// faults the host meets (throttling, partial batches, 500s and dropped
// connections, before and after the server applied the request).
import { startProxyProcess } from './proxy-process.mjs';

/**
 * Starts the proxy in front of `upstream` (`http://127.0.0.1:PORT`) with
 * faults off; `on()` and `off()` switch them, `counts()` resolves to what it
 * did so far ({ requests, throttled, partialBatches, ... }).
 */
export async function startFaultProxy(upstream, { rate = 0.3, seed = 7 } = {}) {
  const proxy = await startProxyProcess('fault_proxy', [new URL(upstream).host, String(rate), String(seed)], 'fault proxy listening');
  return {
    endpoint: proxy.endpoint,
    on: () => proxy.command('on'),
    off: () => proxy.command('off'),
    counts: async () => JSON.parse(await proxy.command('counts')),
    stop: () => proxy.stop(),
  };
}
