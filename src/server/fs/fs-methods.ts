/** The `fs/*` entries of the method table. */
import type { z } from 'zod';
import { Method } from '../../protocol/methods.js';
import * as S from '../../protocol/schemas.js';
import { method, type MethodHandler, type MethodTable } from '../method-table.js';
import { refuseUnsupported } from '../unsupported-requests.js';
import * as ops from './fs-operations.js';

/** An fs method: a sandbox that asks for confinement is refused before anything is touched. */
function fsMethod<S extends z.ZodType<{ sandbox?: unknown }>>(schema: S, struct: string, run: (params: z.output<S>) => unknown): MethodHandler {
  return method(schema, struct, (params) => {
    refuseUnsupported({ sandbox: params.sandbox });
    return run(params);
  });
}

export function fsMethods(): MethodTable {
  return {
    [Method.FsReadFile]: fsMethod(S.FsPathParams, 'FsReadFileParams', (p) => ops.readFile(p.path)),
    [Method.FsWriteFile]: fsMethod(S.FsWriteFileParams, 'FsWriteFileParams', (p) => ops.writeFile(p.path, p.dataBase64)),
    [Method.FsCreateDirectory]: fsMethod(S.FsCreateDirectoryParams, 'FsCreateDirectoryParams', (p) =>
      ops.createDirectory(p.path, p.recursive ?? true),
    ),
    [Method.FsGetMetadata]: fsMethod(S.FsPathParams, 'FsGetMetadataParams', (p) => ops.getMetadata(p.path)),
    [Method.FsReadDirectory]: fsMethod(S.FsPathParams, 'FsReadDirectoryParams', (p) => ops.readDirectory(p.path)),
    [Method.FsRemove]: fsMethod(S.FsRemoveParams, 'FsRemoveParams', (p) => ops.remove(p.path, p.recursive ?? true, p.force ?? true)),
    [Method.FsCopy]: fsMethod(S.FsCopyParams, 'FsCopyParams', (p) => ops.copy(p.sourcePath, p.destinationPath, p.recursive)),
    [Method.FsCanonicalize]: fsMethod(S.FsPathParams, 'FsCanonicalizeParams', (p) => ops.canonicalize(p.path)),
  };
}
