/**
 * http/request over TLS, and NODE_EXTRA_CA_CERTS deferred by the client
 * (src/package/extra-ca-certs.ts): a server the client spawns starts without
 * reading the bundle, trusts it all the same for http/request, and its
 * children see the variable as it was.
 */
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecServerClient } from '../src/index.js';
import { DEFERRED_CA_VARIABLE } from '../src/package/extra-ca-certs.js';
import { policy } from './support/env-policy-cases.js';
import { findByCmdline, findByEnviron } from './support/proc.js';
import { BASE_ENV, ServerProcess } from './support/server-process.js';

const TLS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/tls');
/** The CA that signed the web server's certificate (for 127.0.0.1 and localhost). */
const CA_FILE = path.join(TLS, 'ca.crt');
/** The same CA as an OpenSSL TRUSTED CERTIFICATE (`openssl x509 -addtrust serverAuth`). */
const TRUSTED_CA_FILE = path.join(TLS, 'ca-trusted.crt');

let web: https.Server;
let url: string;
beforeAll(async () => {
  web = https.createServer(
    { cert: fs.readFileSync(path.join(TLS, 'server.crt')), key: fs.readFileSync(path.join(TLS, 'server.key')) },
    (_, res) => res.end('over tls'),
  );
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(web.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  web.closeAllConnections();
  await new Promise((resolve) => web.close(resolve));
});

/** The client's server with `extra` in its environment (NODE_EXTRA_CA_CERTS left out unless given). */
async function clientWith(extra: NodeJS.ProcessEnv): Promise<ExecServerClient> {
  const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env;
  return ExecServerClient.spawn({ env: { ...env, ...extra } });
}

describe('NODE_EXTRA_CA_CERTS through the client', () => {
  it('a spawned server starts without reading it, and trusts it for http/request', async () => {
    const markValue = `${process.pid}-${Date.now()}`;
    const client = await clientWith({ NODE_EXTRA_CA_CERTS: CA_FILE, TLS_TEST_MARK: markValue });
    try {
      // What Node saw at exec: the deferred name only.
      const cli = new Set(findByCmdline('dist/cli/main.js'));
      const [server] = findByEnviron(`TLS_TEST_MARK=${markValue}`).filter((pid) => cli.has(pid));
      const environ = fs.readFileSync(`/proc/${server}/environ`, 'latin1').split('\0');
      expect(environ).toContain(`${DEFERRED_CA_VARIABLE}=${CA_FILE}`);
      expect(environ.filter((entry) => entry.startsWith('NODE_EXTRA_CA_CERTS='))).toEqual([]);

      const response = await client.httpRequest({ method: 'GET', url });
      expect(response.status).toBe(200);
      expect(response.body.toString()).toBe('over tls');
    } finally {
      await client.close();
    }
  });

  it('without it, the same request fails (the CA is what made it pass)', async () => {
    const client = await clientWith({});
    try {
      await expect(client.httpRequest({ method: 'GET', url })).rejects.toThrow(/error sending request/);
    } finally {
      await client.close();
    }
  });

  it('the file is read when the server starts, as Node reads it: removing it afterwards changes nothing', async () => {
    const bundle = path.join(os.tmpdir(), `exec-server-ca-${process.pid}-${Date.now()}.pem`);
    fs.copyFileSync(CA_FILE, bundle);
    const client = await clientWith({ NODE_EXTRA_CA_CERTS: bundle });
    fs.rmSync(bundle);
    try {
      for (let i = 0; i < 3; i++) expect((await client.httpRequest({ method: 'GET', url })).status).toBe(200);
    } finally {
      await client.close();
    }
  });

  it('a TRUSTED CERTIFICATE block is not taken, as Node takes none from the variable', async () => {
    const client = await clientWith({ NODE_EXTRA_CA_CERTS: TRUSTED_CA_FILE });
    try {
      await expect(client.httpRequest({ method: 'GET', url })).rejects.toThrow(/error sending request/);
    } finally {
      await client.close();
    }
    const direct = await ServerProcess.started([], { ...BASE_ENV, NODE_EXTRA_CA_CERTS: TRUSTED_CA_FILE });
    try {
      const error = await direct.error('http/request', { method: 'GET', url, headers: [], body: null, requestId: 'r' });
      expect(error.message).toMatch(/error sending request/);
    } finally {
      await direct.dispose();
    }
  });

  it("a file that cannot be read leaves Node's own store, and the server goes on (Node warns and goes on too)", async () => {
    const client = await clientWith({ NODE_EXTRA_CA_CERTS: path.join(TLS, 'missing.crt') });
    try {
      await expect(client.httpRequest({ method: 'GET', url })).rejects.toThrow(/error sending request/);
      expect((await client.run(['true'])).exitCode).toBe(0); // the server goes on
    } finally {
      await client.close();
    }
  });
});

describe('the deferred variable in the server (CLI)', () => {
  it('children see NODE_EXTRA_CA_CERTS as the client had it, and not the deferred name', async () => {
    const server = await ServerProcess.started([], { ...BASE_ENV, [DEFERRED_CA_VARIABLE]: CA_FILE });
    try {
      await server.request('process/start', {
        processId: 'env',
        argv: ['/usr/bin/env'],
        cwd: '/',
        env: {},
        tty: false,
        envPolicy: policy({}),
      });
      await server.waitClosed('env');
      const lines = server.output('env').toString().split('\n');
      expect(lines).toContain(`NODE_EXTRA_CA_CERTS=${CA_FILE}`);
      expect(lines.filter((line) => line.startsWith(`${DEFERRED_CA_VARIABLE}=`))).toEqual([]);
    } finally {
      await server.dispose();
    }
  });

  it('a server started directly with NODE_EXTRA_CA_CERTS (as Codex starts it) trusts it through Node', async () => {
    const server = await ServerProcess.started([], { ...BASE_ENV, NODE_EXTRA_CA_CERTS: CA_FILE });
    try {
      const answer = await server.request('http/request', { method: 'GET', url, headers: [], body: null, requestId: 'r' });
      expect(answer.status).toBe(200);
    } finally {
      await server.dispose();
    }
  });
});
