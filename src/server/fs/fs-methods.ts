/** The `fs/*` entries of the method table. */
import type { z } from 'zod';
import { Method } from '../../protocol/methods.js';
import * as S from '../../protocol/schemas.js';
import { method, type MethodHandler, type MethodTable } from '../method-table.js';
import { sameFormAs } from '../../protocol/path-uri.js';
import type { Generation } from '../client-generation.js';
import { refuseConfinedFs } from '../unsupported-requests.js';
import * as ops from './fs-operations.js';

/** An fs method: a sandbox that asks for confinement is refused before anything is touched. */
function fsMethod<S extends z.ZodType<{ sandbox?: unknown }>>(schema: S, struct: string, run: (params: z.output<S>) => unknown): MethodHandler {
  return method(schema, struct, (params) => {
    refuseConfinedFs(params.sandbox);
    return run(params);
  });
}

/** `size` is a generation-2 member of `fs/getMetadata`'s answer (the target's size for a symlink). */
async function metadata(native: string, generation: Generation) {
  const { size, ...rest } = await ops.getMetadata(native);
  return generation === 2 ? { ...rest, size } : rest;
}

export function fsMethods(generation: () => Generation): MethodTable {
  return {
    [Method.FsReadFile]: fsMethod(S.FsPathParams, 'FsReadFileParams', (p) => ops.readFile(p.path.native)),
    [Method.FsWriteFile]: fsMethod(S.FsWriteFileParams, 'FsWriteFileParams', (p) => ops.writeFile(p.path.native, p.dataBase64)),
    [Method.FsCreateDirectory]: fsMethod(S.FsCreateDirectoryParams, 'FsCreateDirectoryParams', (p) =>
      ops.createDirectory(p.path.native, p.recursive ?? true),
    ),
    [Method.FsGetMetadata]: fsMethod(S.FsPathParams, 'FsGetMetadataParams', (p) => metadata(p.path.native, generation())),
    [Method.FsReadDirectory]: fsMethod(S.FsPathParams, 'FsReadDirectoryParams', (p) => ops.readDirectory(p.path.native)),
    [Method.FsRemove]: fsMethod(S.FsRemoveParams, 'FsRemoveParams', (p) => ops.remove(p.path.native, p.recursive ?? true, p.force ?? true)),
    [Method.FsCopy]: fsMethod(S.FsCopyParams, 'FsCopyParams', (p) => ops.copy(p.sourcePath.native, p.destinationPath.native, p.recursive)),
    [Method.FsCanonicalize]: fsMethod(S.FsPathParams, 'FsCanonicalizeParams', async (p) => {
      const { path } = await ops.canonicalize(p.path.native);
      return { path: sameFormAs(p.path, path) };
    }),
  };
}
