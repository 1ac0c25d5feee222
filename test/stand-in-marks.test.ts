/**
 * A stand-in's mark (mode 1700) is set by a server that is not root too,
 * also on a directory it cannot read: one an earlier version left (mode
 * 000), or one made under a umask without the owner's read bit. Run as an
 * unprivileged user through `setpriv`, since root reads every directory.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const NOBODY = 65534;
const canDropPrivileges = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
const claims = path.resolve('dist/server/sandbox/stand-in-claims.js');

describe.skipIf(!canDropPrivileges)('stand-in marks, set by an unprivileged server (setpriv)', () => {
  it('claims and marks a stand-in it cannot read: an earlier version’s (000) and one made under umask 477', () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'stand-in-marks-'));
    try {
      fs.chownSync(base, NOBODY, NOBODY);
      const script = `
        const fs = require('node:fs');
        const { claimIn } = require(${JSON.stringify(claims)});
        fs.mkdirSync(${JSON.stringify(`${base}/old`)}, 0o000);
        fs.chmodSync(${JSON.stringify(`${base}/old`)}, 0o000);
        const old = claimIn(${JSON.stringify(`${base}/old`)});
        process.umask(0o477);
        const fresh = claimIn(${JSON.stringify(`${base}/fresh`)});
        const mode = (name) => (fs.statSync(${JSON.stringify(base)} + '/' + name).mode & 0o7777).toString(8);
        console.log(JSON.stringify({ old: old !== undefined, fresh: fresh !== undefined, oldMode: mode('old'), freshMode: mode('fresh') }));`;
      const run = spawnSync(
        'setpriv',
        ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', process.execPath, '-e', script],
        {
          encoding: 'utf8',
        },
      );
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual({ old: true, fresh: true, oldMode: '1700', freshMode: '1700' });
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
