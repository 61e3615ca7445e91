// A proxy the host builds as an example program (the fault proxy, the
// capacity model), run as a child process: it prints one line once it
// listens, then answers one line per command read on stdin.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildHost, targetDir } from './server.mjs';

/**
 * Starts `host/examples/<program>` with `args`; resolves once it prints
 * `<banner> http://…` to `{ endpoint, command(text), stop() }`, where
 * `command` resolves to the line the proxy answers.
 */
export async function startProxyProcess(program, args, banner) {
  buildHost();
  const child = spawn(join(targetDir, 'debug', 'examples', program), args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () => new Promise((resolve) => waiting.push(resolve));
  const first = await Promise.race([next(), new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`${program} exited (${code})`))))]);
  const endpoint = first.startsWith(`${banner} `) ? /^(http:\/\/\S+)$/.exec(first.slice(banner.length + 1))?.[1] : undefined;
  if (!endpoint) throw new Error(`${program} said: ${first}`);
  return {
    endpoint,
    command(text) {
      const answer = next();
      child.stdin.write(`${text}\n`);
      return answer;
    },
    stop() {
      child.stdin.end();
      return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    },
  };
}
