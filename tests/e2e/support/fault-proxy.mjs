// The host's fault-injecting proxy (host/examples/fault_proxy.rs, the
// proxy of the host's own fault tests) in front of a DynamoDB-compatible
// server, for tests of the npm package's driver: it meets exactly the
// faults the host meets (throttling, partial batches, 500s and dropped
// connections, before and after the server applied the request).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildHost, targetDir } from './server.mjs';

/**
 * Starts the proxy in front of `upstream` (`http://127.0.0.1:PORT`) with
 * faults off; `on()` and `off()` switch them, `counts()` resolves to what it
 * did so far ({ requests, throttled, partialBatches, ... }).
 */
export async function startFaultProxy(upstream, { rate = 0.3, seed = 7 } = {}) {
  buildHost();
  const child = spawn(join(targetDir, 'debug', 'examples', 'fault_proxy'), [new URL(upstream).host, String(rate), String(seed)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () => new Promise((resolve) => waiting.push(resolve));
  const first = await Promise.race([next(), new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`fault proxy exited (${code})`))))]);
  const endpoint = /^fault proxy listening (http:\/\/\S+)$/.exec(first)?.[1];
  if (!endpoint) throw new Error(`fault proxy said: ${first}`);
  /** Sends a command; resolves to its answer (once the proxy acted on it). */
  const command = (text) => {
    const answer = next();
    child.stdin.write(`${text}\n`);
    return answer;
  };
  return {
    endpoint,
    on: () => command('on'),
    off: () => command('off'),
    counts: async () => JSON.parse(await command('counts')),
    stop() {
      child.stdin.end();
      return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    },
  };
}
