/**
 * How a generation-2 path is read, beside Codex 0.169.0 when installed: the
 * URI forms the reference takes (scheme case, `%2F`, escapes that are not
 * escapes) and those it refuses, with its codes and texts (query, fragment,
 * NUL, hosts, drive letters, other schemes), and params where none belong.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Arenas, arenas } from './support/arenas.js';

let contest: Arenas;

beforeAll(async () => {
  contest = await arenas('0.169.0', (root) => {
    for (const name of ['f', 'g%ZZ', 'g%', 'é']) fs.writeFileSync(path.join(root, name), '');
    fs.mkdirSync(path.join(root, 'd'));
    fs.writeFileSync(path.join(root, 'd', 'e'), '');
  });
  for (const { server } of contest.list) await server.request('environment/info', null);
});

afterAll(() => contest.dispose());

const metadataOf = (target: unknown) => contest.both('fs/getMetadata', { path: target });
const found = { isFile: true, isDirectory: false };
const refused = (code: number, message: string) => ({ code, message });

describe('generation-2 paths, side by side with the reference', () => {
  it('takes the scheme in any case, %2F as a slash, and escapes that are not escapes as they are', async () => {
    for (const target of [
      'FILE://R/f',
      ' file://R/f',
      'file://R/d%2Fe',
      'file://R/d%2fe',
      'file://R/g%ZZ',
      'file://R/g%',
      'file://R/%C3%A9',
    ]) {
      expect(await metadataOf(target), target).toMatchObject(found);
    }
  });

  it('refuses a query, a fragment and a NUL with the reference texts', async () => {
    for (const suffix of ['?x=1', '?'])
      expect(await metadataOf(`file://R/f${suffix}`)).toEqual(refused(-32602, 'query parameters are not allowed in path URIs'));
    for (const suffix of ['#x', '#', '#a?b'])
      expect(await metadataOf(`file://R/f${suffix}`)).toEqual(refused(-32602, 'fragments are not allowed in path URIs'));
    expect(await metadataOf('file://R/f%00')).toEqual(refused(-32602, "'file://R/f%00' is invalid on 'linux'"));
  });

  it('refuses hosts and drive letters, quoting the URI as URL parsing normalized it', async () => {
    expect(await metadataOf('file://EXAMPLE/f')).toEqual(refused(-32600, "'file://example/f' is invalid on 'linux'"));
    expect(await metadataOf('file://0x7f.1/f')).toEqual(refused(-32600, "'file://127.0.0.1/f' is invalid on 'linux'"));
    expect(await metadataOf('file:///C:/x')).toEqual(refused(-32600, "'file:///C:/x' is invalid on 'linux'"));
    const cwd = await contest.both('process/start', { processId: 'p', argv: ['true'], cwd: 'file://host/x', env: {}, tty: false });
    expect(cwd).toEqual(
      refused(-32602, "cwd URI `file://host/x` is not valid on this exec-server host: 'file://host/x' is invalid on 'linux'"),
    );
  });

  it('words a path that is not one as a bad URI', async () => {
    expect(await metadataOf('')).toEqual(refused(-32602, 'invalid URI: relative URL without a base'));
    expect(await metadataOf('rel/x')).toEqual(refused(-32602, 'invalid URI: relative URL without a base'));
    expect(await metadataOf('http://x/y')).toEqual(refused(-32602, 'unsupported path URI scheme `http`'));
    expect(await metadataOf('C:/x')).toEqual(refused(-32602, 'unsupported path URI scheme `c`'));
  });

  it('takes environment/info and environment/status with null, none or {}, and nothing else', async () => {
    for (const method of ['environment/info', 'environment/status']) {
      expect(await contest.both(method, { a: 1 } as Record<string, unknown>)).toEqual(refused(-32602, 'invalid type: map, expected unit'));
    }
    for (const { server } of contest.list) {
      expect((await server.call('environment/status', [1])).error).toEqual(refused(-32602, 'invalid type: sequence, expected unit'));
      expect((await server.call('environment/status', 5)).error).toEqual(refused(-32602, 'invalid type: number, expected unit'));
      expect((await server.call('environment/status', {})).result).toEqual({ status: 'ready' });
      expect((await server.call('environment/status')).result).toEqual({ status: 'ready' });
    }
  });
});
