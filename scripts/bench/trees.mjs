/**
 * `fs/copy` and a recursive `fs/remove` of a wide tree (20,000 small files in
 * 20 directories), alternating between the servers, against `cp -r` and
 * `rm -r` of the same tree: the raw limit. On tmpfs where there is one, so
 * that the disk's writeback does not decide the figures.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Driver } from './driver.mjs';
import { mapValues, median, ms, RAW } from './stats.mjs';

const DIRECTORIES = 20;
const FILES_EACH = 1000;
const ROUNDS = 3;

function buildSource(root) {
  for (let d = 0; d < DIRECTORIES; d++) {
    const dir = path.join(root, `d${d}`);
    fs.mkdirSync(dir, { recursive: true });
    for (let f = 0; f < FILES_EACH; f++) fs.writeFileSync(path.join(dir, `f${f}`), 'sixteen bytes..\n');
  }
}

async function timed(fn) {
  const started = process.hrtime.bigint();
  await fn();
  return ms(process.hrtime.bigint() - started);
}

async function serverRound(command, source, copy) {
  const driver = await Driver.start(command);
  try {
    const copyMs = await timed(() =>
      driver.request('fs/copy', { sourcePath: pathToFileURL(source).href, destinationPath: pathToFileURL(copy).href, recursive: true }),
    );
    const files = fs.readdirSync(copy).length * FILES_EACH;
    const removeMs = await timed(() => driver.request('fs/remove', { path: pathToFileURL(copy).href, recursive: true, force: false }));
    if (files !== DIRECTORIES * FILES_EACH || fs.existsSync(copy)) throw new Error('copy or removal incomplete');
    return { copyMs, removeMs };
  } finally {
    await driver.close();
  }
}

async function rawRound(source, copy) {
  const copyMs = await timed(() => execFileSync('cp', ['-r', source, copy]));
  const removeMs = await timed(() => execFileSync('rm', ['-r', copy]));
  return { copyMs, removeMs };
}

/** Medians of ROUNDS alternating rounds; each server's figures with their ratio to cp/rm. */
export async function treeCopyAndRemove(commands) {
  const base = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'exec-server-trees-'));
  try {
    const source = path.join(base, 'source');
    buildSource(source);
    const runs = { ...mapValues(commands, () => []), [RAW]: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, command] of Object.entries(commands)) runs[name].push(await serverRound(command, source, path.join(base, 'copy')));
      runs[RAW].push(await rawRound(source, path.join(base, 'copy')));
    }
    const medians = mapValues(runs, (list) => ({
      copyMs: median(list.map((run) => run.copyMs)),
      removeMs: median(list.map((run) => run.removeMs)),
    }));
    const raw = medians[RAW];
    const tmpfs = base.startsWith('/dev/shm');
    const each = Object.keys(commands).map((name) => [
      name,
      { ...medians[name], copyVsCp: medians[name].copyMs / raw.copyMs, removeVsRm: medians[name].removeMs / raw.removeMs, tmpfs },
    ]);
    return Object.fromEntries(each);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}
