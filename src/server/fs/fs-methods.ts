/** The `fs/*` entries of the method table. */
import { Method } from '../../protocol/methods.js';
import * as S from '../../protocol/schemas.js';
import { method, type MethodTable } from '../method-table.js';
import * as ops from './fs-operations.js';

export function fsMethods(): MethodTable {
  return {
    [Method.FsReadFile]: method(S.FsPathParams, 'FsReadFileParams', (p) => ops.readFile(p.path)),
    [Method.FsWriteFile]: method(S.FsWriteFileParams, 'FsWriteFileParams', (p) => ops.writeFile(p.path, p.dataBase64)),
    [Method.FsCreateDirectory]: method(S.FsCreateDirectoryParams, 'FsCreateDirectoryParams', (p) =>
      ops.createDirectory(p.path, p.recursive ?? true),
    ),
    [Method.FsGetMetadata]: method(S.FsPathParams, 'FsGetMetadataParams', (p) => ops.getMetadata(p.path)),
    [Method.FsReadDirectory]: method(S.FsPathParams, 'FsReadDirectoryParams', (p) => ops.readDirectory(p.path)),
    [Method.FsRemove]: method(S.FsRemoveParams, 'FsRemoveParams', (p) => ops.remove(p.path, p.recursive ?? true, p.force ?? true)),
    [Method.FsCopy]: method(S.FsCopyParams, 'FsCopyParams', (p) => ops.copy(p.sourcePath, p.destinationPath, p.recursive)),
    [Method.FsCanonicalize]: method(S.FsPathParams, 'FsCanonicalizeParams', (p) => ops.canonicalize(p.path)),
  };
}
