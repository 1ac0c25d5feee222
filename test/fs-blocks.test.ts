/**
 * fs/open, fs/readBlock, fs/writeBlock, fs/close (generation 2): our
 * answers, and the same requests to Codex 0.169.0's exec-server when it is
 * installed (normalized answers equal, files on disk equal).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Contestant, contestants, hasReference, normalize } from './support/differential.js';
import { b64 } from './support/server-process.js';

let root: string;
let servers: Contestant[];
const uri = (relative: string) => pathToFileURL(path.join(root, relative)).href;
let next = 0;

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'blocks-')));
  servers = await contestants();
});

afterAll(async () => {
  await Promise.all(servers.map((contestant) => contestant.dispose()));
  fs.rmSync(root, { recursive: true, force: true });
});

/** Runs `steps` against every contestant in its own copy of `files`; the normalized answers and resulting files. */
async function scenario(files: Record<string, string>, steps: Array<[string, Record<string, unknown>]>) {
  const outcomes: Record<string, { answers: unknown[]; files: Record<string, string> }> = {};
  for (const { name, server } of servers) {
    const dir = `s${++next}-${name}`;
    fs.mkdirSync(path.join(root, dir));
    for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(root, dir, file), text);
    const answers: unknown[] = [];
    for (const [method, params] of steps) {
      const withPaths = JSON.parse(JSON.stringify(params).replaceAll('@/', `${uri(dir)}/`));
      const response = await server.call(method, withPaths);
      answers.push(normalize(response.error ?? response.result, path.join(root, dir)));
    }
    const after = Object.fromEntries(
      fs.readdirSync(path.join(root, dir)).map((file) => [file, fs.readFileSync(path.join(root, dir, file), 'latin1')]),
    );
    outcomes[name] = { answers, files: after };
  }
  if (hasReference) expect(outcomes.ours).toEqual(outcomes.reference);
  return outcomes.ours!;
}

describe('block file I/O', () => {
  it('reads in blocks, eof when a read comes back short', async () => {
    const { answers } = await scenario({ 'a.txt': 'hello world\n' }, [
      ['fs/open', { handleId: 'r', path: '@/a.txt' }],
      ['fs/readBlock', { handleId: 'r', offset: 0, len: 5 }],
      ['fs/readBlock', { handleId: 'r', offset: 0, len: 12 }],
      ['fs/readBlock', { handleId: 'r', offset: 6, len: 100 }],
      ['fs/readBlock', { handleId: 'r', offset: 12, len: 1 }],
      ['fs/readBlock', { handleId: 'r', offset: 99, len: 1 }],
      ['fs/close', { handleId: 'r' }],
      ['fs/close', { handleId: 'r' }],
    ]);
    expect(answers).toEqual([
      { handleId: 'r' },
      { chunk: b64('hello'), eof: false },
      { chunk: b64('hello world\n'), eof: false },
      { chunk: b64('world\n'), eof: true },
      { chunk: '', eof: true },
      { chunk: '', eof: true },
      {},
      {},
    ]);
  });

  it('replaces a file in place: truncated at open, blocks at any offset, gaps as zeros', async () => {
    const { answers, files } = await scenario({ 'w.txt': 'old content' }, [
      ['fs/open', { handleId: 'w', path: '@/w.txt', mode: 'replace' }],
      ['fs/writeBlock', { handleId: 'w', offset: 0, chunk: b64('hello') }],
      ['fs/writeBlock', { handleId: 'w', offset: 2, chunk: b64('XY') }],
      ['fs/writeBlock', { handleId: 'w', offset: 8, chunk: b64('!') }],
      ['fs/close', { handleId: 'w' }],
      ['fs/open', { handleId: 'n', path: '@/new.txt', mode: 'replace' }],
      ['fs/close', { handleId: 'n' }],
    ]);
    expect(answers).toEqual([{ handleId: 'w' }, {}, {}, {}, {}, { handleId: 'n' }, {}]);
    expect(files).toEqual({ 'w.txt': 'heXYo\0\0\0!', 'new.txt': '' });
  });

  it('refuses what the reference refuses, with its codes and texts', async () => {
    const { answers } = await scenario({ 'a.txt': 'abc' }, [
      ['fs/open', { handleId: 'r', path: '@/a.txt' }],
      ['fs/open', { handleId: 'r', path: '@/missing' }],
      ['fs/open', { handleId: 'x', path: '@/missing' }],
      ['fs/open', { handleId: 'x', path: '@/' }],
      ['fs/readBlock', { handleId: 'r', offset: 0, len: 0 }],
      ['fs/readBlock', { handleId: 'r', offset: 0, len: 1048577 }],
      ['fs/readBlock', { handleId: 'nope', offset: 0, len: 1 }],
      ['fs/writeBlock', { handleId: 'nope', offset: 0, chunk: b64('x') }],
      ['fs/writeBlock', { handleId: 'nope', offset: 2 ** 53 + 2, chunk: b64('x') }],
      ['fs/writeBlock', { handleId: 'r', offset: 0, chunk: '' }],
      ['fs/writeBlock', { handleId: 'r', offset: 0, chunk: '!!!!' }],
      ['fs/writeBlock', { handleId: 'r', offset: 0, chunk: b64('x') }],
      ['fs/readBlock', { handleId: 'r', offset: 0, len: 3 }],
      ['fs/close', { handleId: 'nope' }],
      ['fs/close', { handleId: 'r' }],
      // Handle ids: at most 32 bytes of UTF-8; empty is allowed.
      ['fs/open', { handleId: 'x'.repeat(33), path: '@/a.txt' }],
      ['fs/open', { handleId: `${'é'.repeat(15)}12`, path: '@/a.txt' }],
      ['fs/open', { handleId: `${'é'.repeat(16)}1`, path: '@/a.txt' }],
      ['fs/open', { handleId: '', path: '@/a.txt' }],
      ['fs/close', { handleId: `${'é'.repeat(15)}12` }],
      ['fs/close', { handleId: '' }],
    ]);
    expect(answers).toEqual([
      { handleId: 'r' },
      { code: -32600, message: 'file handle `r` already exists' },
      { code: -32004, message: 'No such file or directory (os error 2)' },
      { code: -32600, message: 'path `R` is not a file' },
      { code: -32600, message: 'file read block length must be between 1 and 1048576' },
      { code: -32600, message: 'file read block length must be between 1 and 1048576' },
      { code: -32004, message: 'unknown file handle `nope`' },
      { code: -32004, message: 'unknown file handle `nope`' },
      { code: -32004, message: 'unknown file handle `nope`' },
      { code: -32600, message: 'file write block length must be between 1 and 1048576' },
      { code: -32602, message: 'Invalid symbol 33, offset 0.' },
      { code: -32603, message: 'Bad file descriptor (os error 9)' },
      { chunk: b64('abc'), eof: false },
      {},
      {},
      { code: -32600, message: 'file handle ID must not exceed 32 bytes' },
      { handleId: `${'é'.repeat(15)}12` },
      { code: -32600, message: 'file handle ID must not exceed 32 bytes' },
      { handleId: '' },
      {},
      {},
    ]);
  });

  it('drops a handle whose read failed, and keeps one whose write failed', async () => {
    const { answers } = await scenario({}, [
      ['fs/open', { handleId: 'w', path: '@/f', mode: 'replace' }],
      ['fs/readBlock', { handleId: 'w', offset: 0, len: 1 }],
      ['fs/writeBlock', { handleId: 'w', offset: 0, chunk: b64('x') }],
    ]);
    expect(answers).toEqual([
      { handleId: 'w' },
      { code: -32603, message: 'Bad file descriptor (os error 9)' },
      { code: -32004, message: 'unknown file handle `w`' },
    ]);
  });

  it('takes offsets above 2^53 as the reference does: past the end, EINVAL from 2^63 (the handle dropped), a write range past 2^63 − 1 refused', async () => {
    const { answers, files } = await scenario({ 'a.txt': 'abc' }, [
      ['fs/open', { handleId: 'r', path: '@/a.txt' }],
      ['fs/readBlock', { handleId: 'r', offset: 2 ** 53 + 2, len: 3 }],
      ['fs/readBlock', { handleId: 'r', offset: 2 ** 60, len: 3 }],
      ['fs/readBlock', { handleId: 'r', offset: 2 ** 63, len: 3 }],
      ['fs/readBlock', { handleId: 'r', offset: 0, len: 3 }],
      ['fs/open', { handleId: 'w', path: '@/a.txt', mode: 'replace' }],
      ['fs/writeBlock', { handleId: 'w', offset: 2 ** 63, chunk: b64('x') }],
      ['fs/close', { handleId: 'w' }],
    ]);
    expect(answers).toEqual([
      { handleId: 'r' },
      { chunk: '', eof: true },
      { chunk: '', eof: true },
      { code: -32600, message: 'Invalid argument (os error 22)' },
      { code: -32004, message: 'unknown file handle `r`' },
      { handleId: 'w' },
      { code: -32600, message: 'file write range exceeds the signed 64-bit file offset limit' },
      {},
    ]);
    expect(files).toEqual({ 'a.txt': '' });
  });

  it('refuses a write at an offset it would round (Node would write at the file position instead)', async () => {
    const ours = servers.find((contestant) => contestant.name === 'ours')!.server;
    const file = path.join(root, 'far.txt');
    fs.writeFileSync(file, 'abc');
    await ours.request('fs/open', { handleId: 'far', path: pathToFileURL(file).href, mode: 'replace' });
    expect(await ours.error('fs/writeBlock', { handleId: 'far', offset: 2 ** 60, chunk: b64('x') })).toEqual({
      code: -32602,
      message: 'offset: above 2^53 - 1, which this server cannot address exactly',
    });
    await ours.request('fs/close', { handleId: 'far' });
    // Truncated when opened, and nothing written since.
    expect(fs.readFileSync(file, 'latin1')).toBe('');
  });

  it('allows at most 128 open handles per connection', async () => {
    const steps: Array<[string, Record<string, unknown>]> = [];
    for (let i = 0; i < 129; i++) steps.push(['fs/open', { handleId: `h${i}`, path: '@/a' }]);
    steps.push(['fs/close', { handleId: 'h0' }], ['fs/open', { handleId: 'again', path: '@/a' }]);
    for (let i = 1; i < 128; i++) steps.push(['fs/close', { handleId: `h${i}` }]);
    const { answers } = await scenario({ a: 'x' }, steps);
    expect(answers[127]).toEqual({ handleId: 'h127' });
    expect(answers[128]).toEqual({ code: -32600, message: 'at most 128 file handles may be open per connection' });
    expect(answers[130]).toEqual({ handleId: 'again' });
  });

  it('names the field of an unknown mode, as every params error does', async () => {
    const ours = servers.find((contestant) => contestant.name === 'ours')!.server;
    expect(await ours.error('fs/open', { handleId: 'x', path: uri('a'), mode: 'bogus' })).toEqual({
      code: -32602,
      message: 'mode: unknown variant `bogus`, expected `read` or `replace`',
    });
  });

  it('refuses fs/readFile of a directory with generation 2 wording', async () => {
    const { answers } = await scenario({}, [['fs/readFile', { path: '@/' }]]);
    expect(answers).toEqual([{ code: -32600, message: 'path `R` is not a file' }]);
  });
});

describe('large answers streamed side by side', () => {
  it('never interleaves a streamed payload line with other lines, even when the client stalls', async () => {
    const ours = servers.find((contestant) => contestant.name === 'ours')!.server;
    const data = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 4) data.writeUInt32LE(i, i);
    const file = path.join(root, 'interleave.bin');
    fs.writeFileSync(file, data);
    await ours.request('fs/open', { handleId: 'big', path: pathToFileURL(file).href });
    ours.child.stdout.pause(); // the server's writes back up: payload lines wait for 'drain' midway
    const reads = Array.from({ length: 8 }, (_, i) =>
      ours.request('fs/readBlock', { handleId: 'big', offset: i * 1024 * 1024, len: 1024 * 1024 }),
    );
    const small = Array.from({ length: 8 }, () => ours.request('fs/getMetadata', { path: pathToFileURL(file).href }));
    const started = ours.start('chatty', ['sh', '-c', 'for i in $(seq 50); do echo line $i; done']);
    await new Promise((resolve) => setTimeout(resolve, 200)); // let the backlog build up
    ours.child.stdout.resume();
    await started;
    const blocks = await Promise.all(reads);
    expect(Buffer.concat(blocks.map((block) => Buffer.from(block.chunk, 'base64'))).equals(data)).toBe(true);
    for (const metadata of await Promise.all(small)) expect(metadata.size).toBe(data.length);
    await ours.waitClosed('chatty');
    expect(ours.output('chatty').toString().split('\n').filter(Boolean)).toHaveLength(50);
    await ours.request('fs/close', { handleId: 'big' });
  });
});

describe('the handle limit under pipelined opens', () => {
  it('lets no more than 128 handles open when 140 opens arrive at once', async () => {
    const ours = servers.find((contestant) => contestant.name === 'ours')!.server;
    const file = path.join(root, 'many.txt');
    fs.writeFileSync(file, 'x');
    await ours.request('fs/close', { handleId: 'again' }); // left open by the limit test above
    const answers = await Promise.all(
      Array.from({ length: 140 }, (_, i) => ours.call('fs/open', { handleId: `p${i}`, path: pathToFileURL(file).href })),
    );
    expect(answers.filter((answer) => answer.result).length).toBe(128);
    expect(answers.filter((answer) => answer.error?.message === 'at most 128 file handles may be open per connection').length).toBe(12);
    await Promise.all(Array.from({ length: 140 }, (_, i) => ours.request('fs/close', { handleId: `p${i}` })));
  });
});

describe('blocks decoded into reused buffers', () => {
  it('lands every pipelined block exact, with failing writes and a second file in between', async () => {
    const ours = servers.find((contestant) => contestant.name === 'ours')!.server;
    const blockBytes = 1024 * 1024; // lines of 1 MiB and more decode into the lent blocks
    const blockOf = (file: number, index: number) => {
      const block = Buffer.allocUnsafe(blockBytes);
      for (let i = 0; i < blockBytes; i += 4) block.writeUInt32LE((file * 1_000_003 + index * 7919 + i) >>> 0, i);
      return block;
    };
    const files = [0, 1].map((file) => path.join(root, `reused-${file}.bin`));
    await Promise.all(
      files.map((file, i) => ours.request('fs/open', { handleId: `reused${i}`, path: pathToFileURL(file).href, mode: 'replace' })),
    );
    const calls: Array<Promise<{ error?: { message: string } }>> = [];
    for (let index = 0; index < 12; index++) {
      for (const file of [0, 1]) {
        const chunk = blockOf(file, index).toString('base64');
        calls.push(ours.call('fs/writeBlock', { handleId: `reused${file}`, offset: index * blockBytes, chunk }));
      }
      // A block that fails after it was decoded: its buffer comes back without a write.
      calls.push(ours.call('fs/writeBlock', { handleId: 'no-such-handle', offset: 0, chunk: blockOf(9, index).toString('base64') }));
    }
    const answers = await Promise.all(calls);
    expect(answers.filter((answer) => answer.error).map((answer) => answer.error!.message)).toEqual(
      Array(12).fill('unknown file handle `no-such-handle`'),
    );
    for (const [file, name] of files.entries()) {
      const expected = Buffer.concat(Array.from({ length: 12 }, (_, index) => blockOf(file, index)));
      expect(fs.readFileSync(name).equals(expected)).toBe(true);
    }
    await Promise.all(files.map((_, i) => ours.request('fs/close', { handleId: `reused${i}` })));
  });
});
