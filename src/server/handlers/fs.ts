/**
 * The `fs/*` handlers. Under a sandbox policy, writes run confined by bwrap
 * (`sandbox/confined-fs.ts`); reads run here, since every accepted policy
 * lets the whole file system be read; a policy asking for more than can be
 * enforced is refused before anything is touched.
 */
import path from 'node:path';
import { sameFormAs } from '../../protocol/path-uri.js';
import type { AnswerBudget } from '../answer-budget.js';
import type { Generation } from '../client-generation.js';
import type { HandlerGroup, MethodsOfFamily } from '../dispatcher.js';
import { Errors } from '../../protocol/errors.js';
import type { FileHandles } from '../fs/file-handles.js';
import { copy } from '../fs/copy.js';
import * as ops from '../fs/fs-operations.js';
import type { MissingWatches } from '../fs/missing-watch.js';
import { walk } from '../fs/walk.js';
import type { ConfinedOp, FsSandbox } from '../sandbox/confined-fs.js';

export function fsHandlers(
  generation: () => Generation,
  handles: FileHandles,
  watches: MissingWatches,
  sandbox: FsSandbox,
  answers: AnswerBudget,
): HandlerGroup<MethodsOfFamily<'filesystem'>> {
  /** Reads: the policy is checked (and refused if unsupported), the call is not confined. */
  const unconfined = <P extends { sandbox?: unknown }>(params: P): P => {
    sandbox.confinement(params.sandbox);
    return params;
  };
  /** Writes: run here without a policy, in the confined helper with one. */
  const write = <T>(params: { sandbox?: unknown }, here: () => Promise<T>, op: ConfinedOp, args: object): Promise<T> => {
    const confinement = sandbox.confinement(params.sandbox);
    return confinement ? sandbox.run<T>(confinement, op, args) : here();
  };
  return {
    'fs/readFile': (params) => ops.readFile(unconfined(params).path.native, answers, generation() === 2),
    'fs/writeFile': (params, request) => {
      const path = params.path.native;
      const confinement = sandbox.confinement(params.sandbox);
      if (!confinement) return ops.writeFile(path, params.dataBase64, request.decodeBase64);
      const decoded = request.decodeBase64(params.dataBase64);
      if (!decoded.ok) throw Errors.writeFileBase64(decoded.error);
      return sandbox.run(confinement, 'writeFile', { path }, decoded.bytes);
    },
    'fs/createDirectory': (params) => {
      const args = { path: params.path.native, recursive: params.recursive ?? true };
      return write(params, () => ops.createDirectory(args.path, args.recursive), 'createDirectory', args);
    },
    'fs/getMetadata': (params) => ops.getMetadata(unconfined(params).path.native, generation() === 2),
    'fs/readDirectory': (params) => ops.readDirectory(unconfined(params).path.native, generation() === 2),
    'fs/remove': (params) => {
      const args = { path: params.path.native, recursive: params.recursive ?? true, force: params.force ?? true };
      // As rm preserves it: one mistaken path (recursive is the default) would take the whole machine with it.
      if (path.resolve(args.path) === '/') throw Errors.removeRoot();
      return write(params, () => ops.remove(args.path, args.recursive, args.force), 'remove', args);
    },
    'fs/copy': (params) => {
      const args = { source: params.sourcePath.native, destination: params.destinationPath.native, recursive: params.recursive };
      return write(params, () => copy(args.source, args.destination, args.recursive), 'copy', args);
    },
    'fs/walk': async (params) => {
      const result = await walk(unconfined(params).path.native, params.options);
      const answer = (native: string) => sameFormAs(params.path, native);
      return {
        entries: result.entries.map((entry) => ({ ...entry, path: answer(entry.path) })),
        errors: result.errors.map((error) => ({ ...error, path: answer(error.path) })),
        truncated: result.truncated,
      };
    },
    'fs/open': async (params) => {
      const mode = params.mode ?? 'read';
      const confinement = sandbox.confinement(params.sandbox);
      if (mode === 'read' || !confinement) return handles.openFile(params.handleId, params.path.native, mode);
      // Under a policy the file is created or truncated in the sandbox, then opened here without either.
      const truncate = () => sandbox.run<{ dev: number; ino: number }>(confinement, 'truncate', { path: params.path.native });
      return handles.openFile(params.handleId, params.path.native, 'truncated', truncate);
    },
    'fs/readBlock': (params) => handles.read(params.handleId, params.offset, params.len),
    'fs/writeBlock': async (params, request) => {
      const decoded = request.decodeBase64(params.chunk);
      if (!decoded.ok) throw Errors.invalidParams(decoded.error);
      try {
        return await handles.write(params.handleId, params.offset, decoded.bytes);
      } finally {
        request.doneWith(decoded.bytes); // written: the block's buffer can take the next one
      }
    },
    'fs/close': (params) => handles.close(params.handleId),
    'fs/watchMissing': (params) =>
      watches.watch(
        params.watchId,
        params.missing.map((missing) => missing.native),
        params.present?.native,
      ),
    'fs/canonicalize': async (params) => {
      const { path } = await ops.canonicalize(unconfined(params).path.native);
      return { path: sameFormAs(params.path, path) };
    },
  };
}
