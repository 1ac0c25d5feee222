import { describe, expect, it } from 'vitest';
import { DEFERRED_CA_VARIABLE, deferExtraCaCerts, restoreExtraCaCerts } from '../../../src/package/extra-ca-certs.js';

describe('deferExtraCaCerts', () => {
  it('moves NODE_EXTRA_CA_CERTS to the deferred name and keeps the rest', () => {
    const env = { PATH: '/bin', NODE_EXTRA_CA_CERTS: '/ca.pem' };
    expect(deferExtraCaCerts(env)).toEqual({ PATH: '/bin', [DEFERRED_CA_VARIABLE]: '/ca.pem' });
    expect(env).toEqual({ PATH: '/bin', NODE_EXTRA_CA_CERTS: '/ca.pem' }); // the caller's object is not changed
  });

  it('leaves the environment alone when there is nothing to defer', () => {
    const env = { PATH: '/bin', NODE_EXTRA_CA_CERTS: '' };
    expect(deferExtraCaCerts(env)).toBe(env);
  });

  it("keeps Node's own reading when NODE_OPTIONS chooses another certificate store", () => {
    for (const option of ['--use-openssl-ca', '--use-bundled-ca', '--openssl-config=/x.cnf']) {
      const env = { NODE_EXTRA_CA_CERTS: '/ca.pem', NODE_OPTIONS: `--max-old-space-size=64 ${option}` };
      expect(deferExtraCaCerts(env)).toBe(env);
    }
  });

  it('without an environment, defers from this process’s and otherwise still inherits', () => {
    const saved = process.env.NODE_EXTRA_CA_CERTS;
    try {
      delete process.env.NODE_EXTRA_CA_CERTS;
      expect(deferExtraCaCerts(undefined)).toBeUndefined();
      process.env.NODE_EXTRA_CA_CERTS = '/ca.pem';
      const deferred = deferExtraCaCerts(undefined);
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
