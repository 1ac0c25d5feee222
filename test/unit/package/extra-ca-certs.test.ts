import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFERRED_CA_VARIABLE, deferExtraCaCerts, restoreExtraCaCerts } from '../../../src/package/extra-ca-certs.js';

describe('deferExtraCaCerts', () => {
  it('moves NODE_EXTRA_CA_CERTS to the deferred name and keeps the rest', () => {
    const env = { PATH: '/bin', NODE_EXTRA_CA_CERTS: '/ca.pem' };
    expect(deferExtraCaCerts(env, false)).toEqual({ PATH: '/bin', [DEFERRED_CA_VARIABLE]: '/ca.pem' });
    expect(env).toEqual({ PATH: '/bin', NODE_EXTRA_CA_CERTS: '/ca.pem' }); // the caller's object is not changed
  });

  it('leaves the environment alone when there is nothing to defer', () => {
    const env = { PATH: '/bin', NODE_EXTRA_CA_CERTS: '' };
    expect(deferExtraCaCerts(env, false)).toBe(env);
  });

  it("keeps Node's own reading when NODE_OPTIONS chooses another certificate store", () => {
    for (const option of ['--use-openssl-ca', '--use-bundled-ca', '--openssl-config=/x.cnf']) {
      const env = { NODE_EXTRA_CA_CERTS: '/ca.pem', NODE_OPTIONS: `--max-old-space-size=64 ${option}` };
      expect(deferExtraCaCerts(env, false)).toBe(env);
    }
  });

  it("keeps it when the system's store is asked for, or when Node was built to use OpenSSL's", () => {
    const system = { NODE_EXTRA_CA_CERTS: '/ca.pem', NODE_USE_SYSTEM_CA: '1' };
    expect(deferExtraCaCerts(system, false)).toBe(system);
    const plain = { NODE_EXTRA_CA_CERTS: '/ca.pem' };
    expect(deferExtraCaCerts(plain, true)).toBe(plain);
  });

  it('without an environment, defers from this process’s and otherwise still inherits', () => {
    const saved = process.env.NODE_EXTRA_CA_CERTS;
    try {
      delete process.env.NODE_EXTRA_CA_CERTS;
      expect(deferExtraCaCerts(undefined, false)).toBeUndefined();
      process.env.NODE_EXTRA_CA_CERTS = '/ca.pem';
      const deferred = deferExtraCaCerts(undefined, false);
      expect(deferred?.[DEFERRED_CA_VARIABLE]).toBe('/ca.pem');
      expect(deferred).not.toHaveProperty('NODE_EXTRA_CA_CERTS');
      expect(deferred?.PATH).toBe(process.env.PATH);
    } finally {
      if (saved === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = saved;
    }
  });
});

describe('restoreExtraCaCerts', () => {
  it('puts the variable back and names the file that Node did not read', () => {
    const env: NodeJS.ProcessEnv = { PATH: '/bin', [DEFERRED_CA_VARIABLE]: '/ca.pem' };
    expect(restoreExtraCaCerts(env)).toBe('/ca.pem');
    expect(env).toEqual({ PATH: '/bin', NODE_EXTRA_CA_CERTS: '/ca.pem' });
  });

  it('changes nothing when nothing was deferred (Node read NODE_EXTRA_CA_CERTS itself)', () => {
    const env: NodeJS.ProcessEnv = { PATH: '/bin', NODE_EXTRA_CA_CERTS: '/own.pem' };
    expect(restoreExtraCaCerts(env)).toBeUndefined();
    expect(env).toEqual({ PATH: '/bin', NODE_EXTRA_CA_CERTS: '/own.pem' });
  });

  it('drops an empty deferred variable', () => {
    const env: NodeJS.ProcessEnv = { [DEFERRED_CA_VARIABLE]: '' };
    expect(restoreExtraCaCerts(env)).toBeUndefined();
    expect(env).toEqual({});
  });
});

describe('ExtraCaCerts (the server side)', () => {
  it('builds one TLS context, whatever the number of sessions and connections', async () => {
    const { ExtraCaCerts } = await import('../../../src/server/http/trusted-cas.js');
    const certs = new ExtraCaCerts(fs.readFileSync(new URL('../../fixtures/tls/ca.crt', import.meta.url)));
    const first = await certs.secureContext();
    expect(await certs.secureContext()).toBe(first);
  });
});
