/**
 * Generation 2's enums in both of serde's forms (`"read"` and `{"read":
 * null}`), beside Codex 0.169.0 when installed. Our texts name the field
 * (`mode: …`, `mode.read: …`), the reference's do not: the field prefix is dropped before
 * comparing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Arenas, arenas } from './support/arenas.js';
import { closeLoopback, listenLoopback } from './support/loopback.js';
import http from 'node:http';

let contest: Arenas;
let web: http.Server;
let base: string;

beforeAll(async () => {
  web = http.createServer((request, response) => {
    // No Date header: the two servers' requests may fall in different seconds.
    response.sendDate = false;
    if (request.url === '/redirect') response.writeHead(302, { location: '/elsewhere' }).end();
    else response.end('hello');
  });
  base = await listenLoopback(web);
  contest = await arenas('0.169.0', (root) => fs.writeFileSync(path.join(root, 'f.txt'), 'hi\n'));
  for (const { server } of contest.list) await server.request('environment/info', null);
});

afterAll(async () => {
  await contest.dispose();
  await closeLoopback(web);
});

/** Without our field prefix, which the reference does not give. */
const unprefixed = (answer: Record<string, unknown>) =>
  typeof answer.message === 'string'
    ? { ...answer, message: answer.message.replace(/^(mode|signal|redirectPolicy)(\.\w+)?: /, '') }
    : answer;

const answer = (method: string, params: Record<string, unknown>) => contest.both(method, params, unprefixed);

const open = (handleId: string, mode: unknown) => answer('fs/open', { handleId, path: 'file://R/f.txt', mode });

describe('tagged enums in map form, side by side with the reference', () => {
  it('takes {"read": null} as "read" for fs/open, and refuses other map shapes with serde texts', async () => {
    expect(await open('h1', { read: null })).toEqual({ handleId: 'h1' });
    expect(await open('h2', { replace: null })).toEqual({ handleId: 'h2' });
    expect(await open('h3', { read: {} })).toEqual({ code: -32602, message: 'invalid type: map, expected unit' });
    expect(await open('h4', { read: [] })).toEqual({ code: -32602, message: 'invalid type: sequence, expected unit' });
    expect(await open('h5', { read: 1 })).toEqual({ code: -32602, message: 'invalid type: number, expected unit' });
    expect(await open('h6', { read: 'x' })).toEqual({ code: -32602, message: 'invalid type: string "x", expected unit' });
    expect(await open('h7', { bogus: {} })).toEqual({ code: -32602, message: 'unknown variant `bogus`, expected `read` or `replace`' });
    expect(await open('h8', {})).toEqual({ code: -32602, message: 'invalid value: map, expected map with a single key' });
    expect(await open('h9', { read: null, replace: null })).toEqual({
      code: -32602,
      message: 'invalid value: map, expected map with a single key',
    });
    expect(await open('h10', null)).toEqual({ code: -32602, message: 'invalid type: null, expected string or map' });
    expect(await open('h11', ['read'])).toEqual({ code: -32602, message: 'invalid type: sequence, expected string or map' });
  });

  it('takes the map form for a signal, and names interrupt as the only variant', async () => {
    for (const { server, root } of contest.list) {
      await server.request('process/start', { processId: 'sleeper', argv: ['sleep', '30'], cwd: `file://${root}`, env: {}, tty: false });
    }
    expect(await answer('process/signal', { processId: 'sleeper', signal: { interrupt: {} } })).toEqual({
      code: -32602,
      message: 'invalid type: map, expected unit',
    });
    expect(await answer('process/signal', { processId: 'sleeper', signal: 'kill' })).toEqual({
      code: -32602,
      message: 'unknown variant `kill`, expected `interrupt`',
    });
    expect(await answer('process/signal', { processId: 'sleeper', signal: { interrupt: null } })).toEqual({});
    for (const { server } of contest.list) {
      await server.waitClosed('sleeper');
      const exited = await server.waitExited('sleeper');
      expect(exited.params.exitCode).toBe(130);
    }
  });

  it('takes the map form for redirectPolicy', async () => {
    const request = (requestId: string, redirectPolicy: unknown) =>
      answer('http/request', { method: 'GET', url: `${base}/redirect`, requestId, redirectPolicy });
    expect(await request('r1', { stop: null })).toMatchObject({ status: 302 });
    expect(await request('r2', { sideways: null })).toEqual({
      code: -32602,
      message: 'unknown variant `sideways`, expected `follow` or `stop`',
    });
  });
});
