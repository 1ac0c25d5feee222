/** Method names by a constant-like key, for callers that prefer `Method.ProcessStart` to a string. */
import type { MethodName } from './methods.js';

export const Method = {
  Initialize: 'initialize',
  ProcessStart: 'process/start',
  ProcessRead: 'process/read',
  ProcessWrite: 'process/write',
  ProcessTerminate: 'process/terminate',
  ProcessResize: 'process/resize',
  ProcessSignal: 'process/signal',
  EnvironmentInfo: 'environment/info',
  EnvironmentStatus: 'environment/status',
  FsReadFile: 'fs/readFile',
  FsWriteFile: 'fs/writeFile',
  FsCreateDirectory: 'fs/createDirectory',
  FsGetMetadata: 'fs/getMetadata',
  FsReadDirectory: 'fs/readDirectory',
  FsRemove: 'fs/remove',
  FsCopy: 'fs/copy',
  FsCanonicalize: 'fs/canonicalize',
  FsWalk: 'fs/walk',
  FsOpen: 'fs/open',
  FsReadBlock: 'fs/readBlock',
  FsWriteBlock: 'fs/writeBlock',
  FsClose: 'fs/close',
  FsWatchMissing: 'fs/watchMissing',
  HttpRequest: 'http/request',
} as const satisfies Record<string, MethodName>;
