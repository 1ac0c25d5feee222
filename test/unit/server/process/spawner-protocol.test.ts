import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  decodeWaitStatus,
  encodePipeRequest,
  encodeRelease,
  encodeStart,
  LineSplitter,
  parseSpawnerLine,
} from '../../../../src/server/process/spawner-protocol.js';

const request = {
  program: 'sh',
  file: '/bin/sh',
  argv0: 'sh',
  args: ['-c', 'echo hi'],
  cwd: '/tmp',
  env: { A: '1', B: 'x y' },
  pipeStdin: true,
  size: { rows: 24, cols: 80 },
};

describe('the spawner line protocol', () => {
  it('spawner.pl is valid perl', () => {
    const script = fileURLToPath(new URL('../../../../src/server/process/spawner.pl', import.meta.url));
    expect(execFileSync('perl', ['-c', script], { stdio: 'pipe' }).toString()).toBe('');
  });

  it('encodes a start as a length line and NUL-separated fields', () => {
    const encoded = encodeStart('7', request);
    const newline = encoded.indexOf(0x0a);
    const payload = encoded.subarray(newline + 1);
    expect(Number(encoded.subarray(0, newline).toString())).toBe(payload.length);
    expect(payload.toString().split('\0')).toEqual(['7', '/bin/sh', '/tmp', '1', '3', 'sh', '-c', 'echo hi', '2', 'A', '1', 'B', 'x y']);
  });

  it('counts bytes, not characters, in the length line', () => {
    const encoded = encodeStart('1', { ...request, args: ['é€'] });
    const newline = encoded.indexOf(0x0a);
    expect(Number(encoded.subarray(0, newline).toString())).toBe(encoded.length - newline - 1);
  });

  it('encodes releases and pipe requests', () => {
    expect(encodeRelease('p3.1')).toBe('R p3.1\n');
    expect(encodePipeRequest('p4', 48)).toBe('P p4 48\n');
  });

  it('parses every message the spawner sends', () => {
    expect(parseSpawnerLine('S 7 1234 - 5 6')).toEqual({
      type: 'started',
      id: '7',
      pid: 1234,
      stdinFd: undefined,
      stdoutFd: 5,
      stderrFd: 6,
    });
    expect(parseSpawnerLine('S 8 99 4 5 6')).toMatchObject({ stdinFd: 4 });
    expect(parseSpawnerLine('F 7 2')).toEqual({ type: 'failed', id: '7', errno: 2 });
    expect(parseSpawnerLine('X 1234 0')).toEqual({ type: 'reaped', pid: 1234, status: { code: 0 } });
    expect(parseSpawnerLine('P p2 10 11 12 13')).toEqual({
      type: 'pipes',
      batch: 'p2',
      pipes: [
        { id: 'p2.0', readFd: 10, writeFd: 11 },
        { id: 'p2.1', readFd: 12, writeFd: 13 },
      ],
    });
    expect(parseSpawnerLine('P p2')).toEqual({ type: 'pipes', batch: 'p2', pipes: [] });
  });

  it('ignores what it does not know', () => {
    for (const line of ['', 'Z 1 2', 'S 7 1234', 'X']) expect(parseSpawnerLine(line)).toBeUndefined();
  });

  it('decodes wait statuses like WEXITSTATUS / WTERMSIG', () => {
    expect(decodeWaitStatus(3 << 8)).toEqual({ code: 3 });
    expect(decodeWaitStatus(9)).toEqual({ signal: 9 });
    expect(decodeWaitStatus(15 | 0x80)).toEqual({ signal: 15 }); // core dumped
  });

  it('splits output into lines across chunks', () => {
    const splitter = new LineSplitter();
    expect(splitter.push('S 1 2 - 3')).toEqual([]);
    expect(splitter.push(' 4\nX 2 0\nF 3')).toEqual(['S 1 2 - 3 4', 'X 2 0']);
    expect(splitter.push(' 2\n')).toEqual(['F 3 2']);
  });
});
