/**
 * The fs helper that runs inside bwrap for writes under a sandbox policy
 * (see `sandbox/confined-fs.ts`): the same operations as unconfined calls,
 * so the same results and error texts, but the kernel decides what may be
 * written. One operation per process: `<op> <params JSON>` in argv, the
 * bytes of a write on stdin, one JSON line on stdout.
 */
import { ProtocolError } from '../../protocol/errors.js';
import { fsError } from '../os-error.js';
import { copy } from './copy.js';
import * as ops from './fs-operations.js';

type Params = { path: string; recursive?: boolean; force?: boolean; source?: string; destination?: string };

async function stdinBytes(): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

async function run(op: string, params: Params): Promise<unknown> {
  switch (op) {
    case 'writeFile': {
      const bytes = await stdinBytes();
      return ops.writeFile(params.path, '', () => ({ ok: true, bytes }));
    }
    case 'createDirectory':
      return ops.createDirectory(params.path, params.recursive ?? true);
    case 'remove':
      return ops.remove(params.path, params.recursive ?? true, params.force ?? true);
    case 'copy':
      return copy(params.source!, params.destination!, params.recursive ?? false);
    case 'truncate':
      return ops.truncate(params.path);
    default:
      throw new Error(`unknown operation ${op}`);
  }
}

const [op = '', json = '{}'] = process.argv.slice(2);
run(op, JSON.parse(json) as Params).then(
  (result) => process.stdout.write(`${JSON.stringify({ result })}\n`),
  (error: unknown) => {
    const failure = error instanceof ProtocolError ? error : fsError(error);
    process.stdout.write(`${JSON.stringify({ error: failure.toJSON() })}\n`);
  },
);
