/** Method names (PROTOCOL.md §0) and the lifecycle gate family of each (§2.3). */

export const Method = {
  Initialize: 'initialize',
  Initialized: 'initialized',
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
  HttpRequest: 'http/request',
} as const;

export const Notification = {
  ProcessOutput: 'process/output',
  ProcessExited: 'process/exited',
  ProcessClosed: 'process/closed',
  HttpBodyDelta: 'http/request/bodyDelta',
} as const;

export type MethodName = (typeof Method)[keyof typeof Method];
export type GateFamily = 'exec' | 'filesystem' | 'http' | 'environment';

/** The family named in "client must call initialize before using <family> methods". */
export function gateFamily(method: string): GateFamily | undefined {
  if (method.startsWith('process/')) return 'exec';
  if (method.startsWith('fs/')) return 'filesystem';
  if (method === Method.HttpRequest) return 'http';
  if (method === Method.EnvironmentInfo || method === Method.EnvironmentStatus) return 'environment';
  return undefined;
}
