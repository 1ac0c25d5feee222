/** The `fs/*` handlers. A sandbox that asks for confinement is refused before anything is touched. */
import { sameFormAs } from '../../protocol/path-uri.js';
import type { Generation } from '../client-generation.js';
import type { HandlerGroup, MethodsOfFamily } from '../dispatcher.js';
import { Errors } from '../../protocol/errors.js';
import type { FileHandles } from '../fs/file-handles.js';
import * as ops from '../fs/fs-operations.js';
import type { MissingWatches } from '../fs/missing-watch.js';
import { walk } from '../fs/walk.js';
import { refuseConfinedFs } from '../unsupported-requests.js';

/** `size` is a generation-2 member of `fs/getMetadata`'s answer (the target's size for a symlink). */
async function metadata(native: string, generation: Generation) {
  const { size, ...rest } = await ops.getMetadata(native);
  return generation === 2 ? { ...rest, size } : rest;
}

export function fsHandlers(
  generation: () => Generation,
  handles: FileHandles,
  watches: MissingWatches,
): HandlerGroup<MethodsOfFamily<'filesystem'>> {
  const unconfined = <P extends { sandbox?: unknown }>(params: P): P => {
    refuseConfinedFs(params.sandbox);
    return params;
  };
  return {
    'fs/readFile': (params) => ops.readFile(unconfined(params).path.native, generation() === 2),
    'fs/writeFile': (params, request) => ops.writeFile(unconfined(params).path.native, params.dataBase64, request.decodeBase64),
    'fs/createDirectory': (params) => ops.createDirectory(unconfined(params).path.native, params.recursive ?? true),
    'fs/getMetadata': (params) => metadata(unconfined(params).path.native, generation()),
    'fs/readDirectory': (params) => ops.readDirectory(unconfined(params).path.native),
    'fs/remove': (params) => ops.remove(unconfined(params).path.native, params.recursive ?? true, params.force ?? true),
    'fs/copy': (params) => ops.copy(unconfined(params).sourcePath.native, params.destinationPath.native, params.recursive),
    'fs/walk': async (params) => {
      const result = await walk(unconfined(params).path.native, params.options);
      const answer = (native: string) => sameFormAs(params.path, native);
      return {
        entries: result.entries.map((entry) => ({ ...entry, path: answer(entry.path) })),
        errors: result.errors.map((error) => ({ ...error, path: answer(error.path) })),
        truncated: result.truncated,
      };
    },
    'fs/open': (params) => handles.openFile(params.handleId, unconfined(params).path.native, params.mode ?? 'read'),
    'fs/readBlock': (params) => handles.read(params.handleId, params.offset, params.len),
    'fs/writeBlock': (params, request) => {
      const decoded = request.decodeBase64(params.chunk);
      if (!decoded.ok) throw Errors.invalidParams(decoded.error);
      return handles.write(params.handleId, params.offset, decoded.bytes);
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
