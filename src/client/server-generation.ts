/**
 * Speaking the server's protocol generation (PROTOCOL-V2.md). A server that
 * answers `initialize` with `environmentInfo` is generation 2 (Codex 0.169):
 * it wants `file://` URIs for every path and a `writeId` on every write, and
 * answers paths as URIs. Generation 1 servers (ours, Codex 0.134) take native
 * paths. The client's API stays in native paths either way.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Errors } from '../protocol/errors.js';
import { randomHex } from '../protocol/random-ids.js';
import { ClientErrors } from './errors.js';

export class ServerGeneration {
  /**
   * `writeId`s are this client's prefix and a count: a server skips an id it has seen for the process,
   * and a client that resumed another's session must not reuse that one's ids.
   */
  private readonly writeIdPrefix = randomHex(8);
  private writes = 0;

  constructor(
    readonly value: 1 | 2,
    /** The server's cwd, which relative paths resolve against (generation 2 needs absolute URIs). */
    private readonly serverCwd: string | undefined,
    /** Whether writes carry a `writeId`: generation 2 requires one (an in-process session of generation 2 takes native paths). */
    private readonly writeIds = value === 2,
  ) {}

  /**
   * Learns the generation from an `initialize` result: 2 when the server
   * describes its environment (ours does, and takes both), unless `forced`.
   */
  static fromInitialize(result: { environmentInfo?: { cwd?: string } }, forced?: 1 | 2): ServerGeneration {
    if (!result.environmentInfo || forced === 1) return new ServerGeneration(1, undefined);
    const cwd = result.environmentInfo.cwd;
    return new ServerGeneration(2, cwd?.startsWith('file:') ? nativeFromUri(cwd) : cwd);
  }

  /**
   * Refuses a member generation 1 has no place for, before anything is sent:
   * dropped, it would be a promise broken (a sandbox not applied, a redirect
   * followed); sent, it would make a server take the client for generation 2.
   */
  requireGeneration2(member: string, why: string): void {
    if (this.value === 1) throw ClientErrors.fromServer(Errors.unsupportedMember(member, why));
  }

  /** An fs path as the server wants it; a relative one goes as it is, for the server to refuse. */
  path(native: string): string {
    if (this.value === 1 || !path.isAbsolute(native)) return native;
    return pathToFileURL(native).href;
  }

  /** A `process/start` cwd: a relative one resolves against the server's cwd, as generation 1 servers do. */
  cwd(native: string): string {
    if (this.value === 1) return native;
    const absolute = path.isAbsolute(native) || !this.serverCwd ? path.resolve(native) : path.resolve(this.serverCwd, native);
    return pathToFileURL(absolute).href;
  }

  /** A path from an answer, as the client's API gives it (native). */
  fromServer(answer: string): string {
    return answer.startsWith('file:') ? nativeFromUri(answer) : answer;
  }

  /** The members a write carries: a fresh `writeId` per write in generation 2. */
  writeMembers(): { writeId?: string } {
    if (!this.writeIds) return {};
    return { writeId: `${this.writeIdPrefix}-${++this.writes}` };
  }
}

/**
 * A server's `file://` URI as a native path. `|` goes in escaped: URL parsing reads `/q|` at the
 * start of a path as the drive `q:` (the server writes `|` as it is, as the reference does).
 */
const nativeFromUri = (uri: string): string => fileURLToPath(uri.replaceAll('|', '%7C'));
