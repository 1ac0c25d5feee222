import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorTableMarkdown } from '../../../scripts/error-table.mjs';
import { ClientErrors, ExecServerClientError, ExecServerError } from '../../../src/client/errors.js';
import { Errors, ErrorTexts, ProtocolError } from '../../../src/protocol/errors.js';

const ROOT = new URL('../../../', import.meta.url);

describe('errors, created in one place', () => {
  it('docs/errors.md is up to date (run `npm run schema` if not)', () => {
    expect(fs.readFileSync(new URL('docs/errors.md', ROOT), 'utf8')).toBe(errorTableMarkdown({ Errors, ErrorTexts, ClientErrors }));
  });

  it('every constructor and text is used somewhere in src/ (no dead entries)', () => {
    const uses = (pattern: string) => execFileSync('grep', ['-rlE', pattern, 'src'], { cwd: ROOT }).toString().split('\n').filter(Boolean);
    for (const name of Object.keys(Errors))
      expect(
        uses(`Errors\\.${name}\\b`).filter((f) => !f.endsWith('protocol/errors.ts')),
        name,
      ).not.toEqual([]);
    for (const name of Object.keys(ErrorTexts)) expect(uses(`ErrorTexts\\.${name}\\b`), name).not.toEqual([]);
    for (const name of Object.keys(ClientErrors))
      expect(
        uses(`ClientErrors\\.${name}\\b`).filter((f) => !f.endsWith('client/errors.ts')),
        name,
      ).not.toEqual([]);
  });

  it('server errors carry a JSON-RPC code and serialize to code and message only', () => {
    const error = Errors.unknownProcess('p1');
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.toJSON()).toEqual({ code: -32600, message: 'unknown process id p1' });
    const cause = new Error('boom');
    expect(Errors.internal('boom', cause).cause).toBe(cause);
  });

  it('client errors keep the server error as their cause', () => {
    const server = Errors.processExists('x');
    const client = ClientErrors.fromServer(server);
    expect(client).toBeInstanceOf(ExecServerError);
    expect(client).toMatchObject({ code: -32600, message: 'process x already exists', cause: server });
    expect(ClientErrors.disconnected('gone')).toBeInstanceOf(ExecServerClientError);
  });
});
