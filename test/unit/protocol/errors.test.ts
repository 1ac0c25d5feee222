import fs from 'node:fs';
import path from 'node:path';
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
    // Every source file read once (a grep per entry forked this worker a hundred times: seconds of CPU).
    const src = new URL('src/', ROOT).pathname;
    const sources = (fs.readdirSync(src, { recursive: true }) as string[])
      .filter((file) => file.endsWith('.ts'))
      .map((file) => ({ file, text: fs.readFileSync(path.join(src, file), 'utf8') }));
    const uses = (pattern: string) => sources.filter(({ text }) => new RegExp(pattern).test(text)).map(({ file }) => file);
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
