#!/usr/bin/env node
// The npm package's driver (dynaslice/dynamodb, in this Node process) beside
// the Rust host (the `dynaslice` CLI, release build, one process per
// operation) on the same store: Amazon's DynamoDB Local on 127.0.0.1. Puts
// and gets of a 10 MiB random binary and a ~10 MiB order-history document
// (DynamoDB JSON), each side's defaults, fresh keys per repetition. Prints a
// Markdown table of MB/s (10^6 payload bytes per second of wall time,
// median of the repetitions; a document's bytes are its DynamoDB item size);
// BENCHMARKS.md has a run.
//
//   npm run bench:driver            # builds the host (release) first if needed
//   DYNASLICE_BENCH_REPS=7 npm run bench:driver
//
// The host's times include its process start and its DescribeTable; the row
// "host: a get of an absent key" shows what that costs alone.

import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { itemSize } from 'dynaslice';
import { getItem, putItem } from 'dynaslice/dynamodb';
import { startDynamoDBLocal } from '../../tests/js/support/dynamodb-local.mjs';
import { orderHistory } from '../../tests/js/support/documents.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(root, 'target');
const host = join(targetDir, 'release', 'dynaslice');
const REPS = Number(process.env.DYNASLICE_BENCH_REPS ?? 5);
const MiB = 1024 * 1024;

console.error('bench: building the host (release)…');
execFileSync('cargo', ['build', '--release', '-p', 'dynaslice-host', '--bin', 'dynaslice'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });

const server = await startDynamoDBLocal();
const client = server.client();
const work = mkdtempSync(join(tmpdir(), 'dynaslice-bench-driver-'));
const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };

/** Runs the host CLI against the server; returns its stdout (a failure throws, unless `mayFail`). */
function cli(args, mayFail = false) {
  const run = spawnSync(host, [...args, '--endpoint', server.endpoint], {
    env: { ...process.env, AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_REGION: 'us-east-1' },
    maxBuffer: 256 * MiB,
    encoding: 'buffer',
  });
  if (run.status !== 0 && !mayFail) throw new Error(`dynaslice ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Median wall time in ms of `REPS` calls of `once(rep)`, after one warm-up,
 * and the capacity units the last call reported (what `once` returns).
 */
async function timed(once) {
  await once(-1);
  const times = [];
  let units;
  for (let rep = 0; rep < REPS; rep++) {
    const start = performance.now();
    units = await once(rep);
    times.push(performance.now() - start);
  }
  return { ms: median(times), units };
}

/** Units the host CLI reported (`--output json`): `consumedWriteUnits` or `consumedReadUnits`. */
const hostUnits = (stdout, field) => JSON.parse(stdout.toString())[field];

try {
  for (const name of ['docs', 'docs_chunks']) {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
  }
  const binary = new Uint8Array(randomBytes(10 * MiB));
  const binaryFile = join(work, 'binary.bin');
  writeFileSync(binaryFile, binary);
  const docPlain = orderHistory({ pk: 'x' }, 10 * MiB, 1);
  const { pk: _, ...docBody } = marshall(docPlain, { convertClassInstanceToMap: true });
  // Its size as DynamoDB counts it (the DynamoDB JSON text is about twice that).
  const docBytes = itemSize({ pk: { S: 'doc-host-0' }, ...docBody });

  const rows = [];
  // Binary: the host streams a file into `data`; the driver writes the same bytes as `data`.
  const binaryKey = (who, rep) => `bin-${who}-${rep}`;
  const hostBinPut = await timed((rep) =>
    hostUnits(cli(['put', '-t', 'docs', '-k', `pk=${binaryKey('host', rep)}`, '--file', binaryFile, '--output', 'json']), 'consumedWriteUnits'),
  );
  const hostBinGet = await timed((rep) => {
    const out = join(work, `out-${rep}.bin`);
    const stdout = cli(['get', '-t', 'docs', '-k', `pk=${binaryKey('host', rep)}`, '--out', out, '--output', 'json']);
    if (!readFileSync(out).equals(binary)) throw new Error('host get: bytes differ');
    return hostUnits(stdout, 'consumedReadUnits');
  });
  const driverBinPut = await timed(async (rep) => (await putItem(client, { pk: { S: binaryKey('driver', rep) }, data: { B: binary } }, table)).consumed.writeUnits);
  const driverBinGet = await timed(async (rep) => {
    const { item, consumed } = await getItem(client, { pk: { S: binaryKey('driver', rep) } }, table);
    if (!Buffer.from(item.data.B).equals(binary)) throw new Error('driver get: bytes differ');
    return consumed.readUnits;
  });
  rows.push(['binary 10 MiB', binary.length, hostBinPut, driverBinPut, hostBinGet, driverBinGet]);

  // The document, in DynamoDB JSON: the host reads it from a file, the driver takes the object.
  const docKey = (who, rep) => `doc-${who}-${rep}`;
  const docFile = (rep) => join(work, `doc-${rep}.json`);
  for (let rep = -1; rep < REPS; rep++) writeFileSync(docFile(rep), JSON.stringify({ pk: { S: docKey('host', rep) }, ...docBody }));
  const hostDocPut = await timed((rep) =>
    hostUnits(cli(['put', '-t', 'docs', '-k', `pk=${docKey('host', rep)}`, '--json', `@${docFile(rep)}`, '--output', 'json']), 'consumedWriteUnits'),
  );
  // `get --out` writes the item as DynamoDB JSON (it is not a stored file) and reports its units.
  const hostDocGet = await timed((rep) =>
    hostUnits(cli(['get', '-t', 'docs', '-k', `pk=${docKey('host', rep)}`, '--out', join(work, `doc-out-${rep}.json`), '--output', 'json']), 'consumedReadUnits'),
  );
  const driverDocPut = await timed(async (rep) => (await putItem(client, { pk: { S: docKey('driver', rep) }, ...docBody }, table)).consumed.writeUnits);
  const driverDocGet = await timed(async (rep) => (await getItem(client, { pk: { S: docKey('driver', rep) } }, table)).consumed.readUnits);
  rows.push(['order history ~10 MiB (JSON)', docBytes, hostDocPut, driverDocPut, hostDocGet, driverDocGet]);

  // NOT_FOUND: the process exits 1 after its one GetItem.
  const hostNoop = await timed(() => void cli(['get', '-t', 'docs', '-k', 'pk=absent', '--json'], true));

  const mbs = (bytes, { ms }) => (bytes / 1e6 / (ms / 1000)).toFixed(1);
  // Capacity units per MB (10^6 payload bytes), as the store reported them.
  const perMb = (bytes, { units }) => (units === undefined ? '—' : (units / (bytes / 1e6)).toFixed(0));
  console.log(`\nNode ${process.version}, ${cpus().length} × ${cpus()[0]?.model}, load ${loadavg()[0].toFixed(1)}, ${REPS} repetitions (median)\n`);
  console.log('| item | payload bytes | host put MB/s (WCU/MB) | driver put MB/s (WCU/MB) | driver/host put | host get MB/s (RCU/MB) | driver get MB/s (RCU/MB) | driver/host get |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [name, bytes, hp, dp, hg, dg] of rows) {
    const cell = (t) => `${mbs(bytes, t)} (${perMb(bytes, t)})`;
    console.log(`| ${name} | ${bytes.toLocaleString('en')} | ${cell(hp)} | ${cell(dp)} | ${(hp.ms / dp.ms).toFixed(2)}x | ${cell(hg)} | ${cell(dg)} | ${(hg.ms / dg.ms).toFixed(2)}x |`);
  }
  console.log(`\nWall times, ms (median): ${rows.map(([n, , hp, dp, hg, dg]) => `${n}: host put ${hp.ms.toFixed(0)}, driver put ${dp.ms.toFixed(0)}, host get ${hg.ms.toFixed(0)}, driver get ${dg.ms.toFixed(0)}`).join('; ')}.`);
  console.log(`Host: a get of an absent key (process start, DescribeTable, one GetItem): ${hostNoop.ms.toFixed(0)} ms.`);
} finally {
  client.destroy();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
