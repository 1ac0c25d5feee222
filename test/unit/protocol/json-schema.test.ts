import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { protocolJsonSchema, protocolJsonSchemaText } from '../../../src/protocol/json-schema.js';
import { Methods } from '../../../src/protocol/methods.js';
import { Notifications } from '../../../src/protocol/notifications.js';

const FILE = new URL('../../../schema/exec-server.schema.json', import.meta.url);

describe('the published JSON Schema', () => {
  it('is up to date with the protocol table (run `npm run schema` if not)', () => {
    expect(fs.readFileSync(FILE, 'utf8')).toBe(protocolJsonSchemaText());
  });

  it('indexes every method and notification, and every $ref resolves', () => {
    const schema = protocolJsonSchema() as { 'x-methods': object; 'x-notifications': object; $defs: Record<string, unknown> };
    expect(Object.keys(schema['x-methods'])).toEqual(Object.keys(Methods));
    expect(Object.keys(schema['x-notifications'])).toEqual(Object.keys(Notifications));
    const refs = JSON.stringify(schema).match(/"#\/\$defs\/[A-Za-z]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(Object.keys(Methods).length * 2);
    for (const ref of refs) expect(schema.$defs).toHaveProperty(ref.slice('"#/$defs/'.length, -1));
  });

  it('describes params as a client sends them: paths as strings, required members required', () => {
    const defs = (protocolJsonSchema() as { $defs: Record<string, { properties: Record<string, unknown>; required: string[] }> }).$defs;
    expect(defs.FsReadFileParams!.properties.path).toEqual({ type: 'string' });
    expect(defs.ProcessStartParams!.required).toEqual(['processId', 'argv', 'cwd', 'env', 'tty']);
    expect(defs.ProcessReadResult!.required).toContain('nextSeq');
  });
});
