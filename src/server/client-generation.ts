/**
 * Which protocol generation the client speaks (PROTOCOL-V2.md). Generation 1
 * (Codex 0.134) is assumed until the client shows generation 2 (Codex 0.169)
 * by something only generation 2 sends:
 * - a `file://` URI where a path goes (`cwd`, fs paths);
 * - a `writeId` on `process/write`;
 * - `redirectPolicy`, or a header's `valueEnvVar`, on `http/request`;
 * - `environment/info` with `params: null`, or `environment/status`.
 * A `sandbox` on `process/start` shows nothing: Codex 0.169 sends it with a
 * `file://` cwd, and the 0.134 reference takes it from a client that
 * speaks plain paths (and ignores it; we enforce it). Nor do the other
 * methods only generation 2 has (`fs/open`, `fs/walk`…): our client offers
 * them over generation 1 too; their params are worded as generation 2's.
 * From then on the connection answers in generation 2's shapes: `sandboxType`
 * and `sandboxDenied`, exit codes 128+signal, `nextSeq` counting every event.
 */
import { Method } from '../protocol/method-names.js';
import type { Generation } from '../protocol/method-spec.js';
import type { MethodName } from '../protocol/methods.js';
import { isFileUri } from '../protocol/path-uri.js';

export type { Generation };

const PATH_MEMBERS = ['path', 'sourcePath', 'destinationPath', 'cwd'];

/** Whether a header of an `http/request` takes its value from the server's environment (`valueEnvVar`). */
const hasHeaderFromEnv = (headers: unknown) =>
  Array.isArray(headers) && headers.some((header) => typeof header === 'object' && header !== null && header.valueEnvVar != null);

function showsGeneration2(method: MethodName, params: unknown): boolean {
  if (method === Method.EnvironmentStatus || (method === Method.EnvironmentInfo && params === null)) return true;
  if (typeof params !== 'object' || params === null) return false;
  const members = params as Record<string, unknown>;
  if (method === Method.ProcessWrite && members.writeId !== undefined && members.writeId !== null) return true;
  if (method === Method.HttpRequest && (members.redirectPolicy !== undefined || hasHeaderFromEnv(members.headers))) return true;
  return PATH_MEMBERS.some((name) => typeof members[name] === 'string' && isFileUri(members[name] as string));
}

export class ClientGeneration {
  /** `initial` 2 makes an in-process caller get generation 2's shapes from the start. */
  constructor(private current: Generation = 1) {}

  get value(): Generation {
    return this.current;
  }

  /** Raises the generation to `generation` (a resumed session's), never lowers it. */
  atLeast(generation: Generation): void {
    if (generation > this.current) this.current = generation;
  }

  /** Looks at every request before it runs. */
  observe(method: MethodName, params: unknown): void {
    if (this.current === 1 && showsGeneration2(method, params)) this.current = 2;
  }
}
