/**
 * The protocol table as a JSON Schema (draft 2020-12), for clients in other
 * languages: every method's params and result and every notification's
 * params under `$defs`, and an index of methods (`x-methods`) and
 * notifications (`x-notifications`) that points at them. `npm run schema`
 * writes it to `schema/exec-server.schema.json`; a test fails when that
 * file is stale.
 */
import * as z from 'zod/mini';
import { type MethodName, Methods, resultSchemaOf } from './methods.js';
import { Notifications } from './notifications.js';

type JsonObject = Record<string, unknown>;

/** `process/start` → `ProcessStart`. */
function typeName(method: string): string {
  return method
    .split(/[/_]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

function definition(schema: z.ZodMiniType, io: 'input' | 'output'): JsonObject {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  return rest;
}

export function protocolJsonSchema(): JsonObject {
  const defs: JsonObject = {};
  const ref = (name: string, schema: z.ZodMiniType, io: 'input' | 'output') => {
    defs[name] = definition(schema, io);
    return { $ref: `#/$defs/${name}` };
  };
  const methods: JsonObject = {};
  for (const [name, spec] of Object.entries(Methods)) {
    methods[name] = {
      summary: spec.summary,
      family: spec.family ?? null,
      generations: spec.generations,
      params: ref(`${typeName(name)}Params`, spec.params, 'input'),
      result: ref(`${typeName(name)}Result`, resultSchemaOf(name as MethodName), 'output'),
    };
  }
  const notifications: JsonObject = {};
  for (const [name, spec] of Object.entries(Notifications)) {
    notifications[name] = {
      summary: spec.summary,
      direction: spec.direction,
      generations: spec.generations,
      params: ref(`${typeName(name)}Notification`, spec.params, 'output'),
    };
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'exec-server protocol',
    description:
      'Line-delimited JSON-RPC between a client and an exec-server: one JSON message per line, no "jsonrpc" member. Generation 1 is Codex 0.134\'s protocol, generation 2 Codex 0.169\'s.',
    'x-methods': methods,
    'x-notifications': notifications,
    $defs: defs,
  };
}

/** The file's text: stable key order, two-space indent, final newline. */
export function protocolJsonSchemaText(): string {
  return `${JSON.stringify(protocolJsonSchema(), null, 2)}\n`;
}
