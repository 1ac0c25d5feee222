/** fs errors of a server that runs as an unprivileged user. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServerProcess } from './support/server-process.js';

describe('permissions (as nobody)', () => {
  it('maps EACCES to -32600 when the server runs as an unprivileged user', async () => {
    const nobody = { uid: 65534, gid: 65534 };
    const locked = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-perm-'));
    fs.chmodSync(locked, 0o755);
    fs.writeFileSync(path.join(locked, 'secret'), 'x', { mode: 0o600 });
    const unprivileged = await ServerProcess.started([], process.env, nobody);
    try {
      expect(await unprivileged.error('fs/readFile', { path: path.join(locked, 'secret') })).toEqual({
        code: -32600,
        message: 'Permission denied (os error 13)',
      });
      expect(await unprivileged.error('fs/writeFile', { path: path.join(locked, 'new'), dataBase64: '' })).toEqual({
        code: -32600,
        message: 'Permission denied (os error 13)',
      });
    } finally {
      await unprivileged.dispose();
      fs.rmSync(locked, { recursive: true, force: true });
    }
  });
});
