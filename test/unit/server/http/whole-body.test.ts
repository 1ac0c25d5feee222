import http from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWholeBody } from '../../../../src/server/http/whole-body.js';
import { closeLoopback, listenLoopback } from '../../../support/loopback.js';

const BODY = Buffer.from('0123456789'.repeat(10_000));

let web: http.Server;
let base: string;
beforeAll(async () => {
  web = http.createServer((req, res) => {
    if (req.url === '/declared') {
      res.setHeader('content-length', BODY.length);
      // Several writes: the body comes in more than one chunk.
      for (let at = 0; at < BODY.length; at += 7_000) res.write(BODY.subarray(at, at + 7_000));
      res.end();
    } else if (req.url === '/chunked') {
      res.write(BODY.subarray(0, 50_000));
      res.end(BODY.subarray(50_000));
    } else if (req.url === '/short') {
      res.setHeader('content-length', BODY.length);
      res.write(BODY.subarray(0, 1000), () => res.destroy());
    } else {
      res.end(BODY);
    }
  });
  base = await listenLoopback(web);
});
afterAll(() => closeLoopback(web));

async function whole(path: string, method: 'GET' | 'HEAD' = 'GET', room = () => Promise.resolve()): Promise<Buffer> {
  const response = await request(`${base}${path}`, { method });
  return readWholeBody(response.body, response.statusCode, response.headers['content-length'], room);
}

describe('readWholeBody', () => {
  it('reads a body of declared length that comes in pieces, exactly', async () => {
    expect((await whole('/declared')).equals(BODY)).toBe(true);
  });

  it('reads a chunked body, which declares no length', async () => {
    expect((await whole('/chunked')).equals(BODY)).toBe(true);
  });

  it('gives an empty body to a HEAD answer that declares a length', async () => {
    expect(await whole('/declared', 'HEAD')).toEqual(Buffer.alloc(0));
  });

  it('fails when the connection ends before the declared length', async () => {
    await expect(whole('/short')).rejects.toThrow();
  });

  it('asks for room before each chunk it takes, and fails when the wait for room does', async () => {
    for (const path of ['/declared', '/chunked']) {
      let asked = 0;
      const room = async () => {
        asked += 1;
      };
      expect((await whole(path, 'GET', room)).equals(BODY)).toBe(true);
      expect(asked).toBeGreaterThan(1); // before the first chunk and after each
      await expect(whole(path, 'GET', () => Promise.reject(new Error('aborted')))).rejects.toThrow('aborted');
    }
  });
});
