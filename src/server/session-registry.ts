/**
 * The sessions of one server, by id (`initialize` answers the id;
 * `resumeSessionId` names it again). Over stdio a server has one connection
 * and its session ends with it. A WebSocket listener shares one registry
 * between its connections: when a connection drops, its session is detached
 * for `detachedTtlMs` (processes keep running, output kept), and a new
 * connection that initializes with its id gets it back. When the window
 * passes, its processes are killed as at the end of input.
 */
import { Errors } from '../protocol/errors.js';
import type { Generation } from './client-generation.js';
import { silentLogger, type Logger } from './logger.js';
import type { ProcessEventSink } from './process/managed-process.js';
import type { ProcessManagerOptions } from './process/process-manager.js';
import { randomUuid } from '../protocol/random-ids.js';
import { SessionProcesses } from './session-processes.js';

export interface SessionRegistryOptions {
  /** How long a dropped connection's session waits to be resumed; 0 ends it at once. */
  detachedTtlMs: number;
  processes: ProcessManagerOptions;
  logger?: Logger;
  /**
   * Told when a resume is refused because another connection holds the
   * session: that connection may be dead without the server knowing yet
   * (a listener then checks it at once rather than at its next ping).
   */
  onContested?: (sessionId: string) => void;
}

/** How a connection lets go of its session. */
export type Release =
  /** End of input: kill what runs and wait for its last events (EXT-DRAIN). */
  | 'drain'
  /** Nobody can be told any more (output broke, second signal, clean close): kill at once. */
  | 'kill'
  /** The transport dropped: keep the session for a resume, if the registry allows it. */
  | 'detach';

/** What `attach` gives a connection: the session, and the generation its earlier connection spoke (1 for a new one). */
export interface Attached {
  sessionId: string;
  processes: SessionProcesses;
  generation: Generation;
}

interface Entry {
  processes: SessionProcesses;
  expiry?: NodeJS.Timeout;
}

/**
 * A session as logs name it: the start of its id. The whole id resumes the
 * session (it is the only proof a client needs), so it stays out of logs,
 * as a token would.
 */
const logName = (sessionId: string): string => `${sessionId.slice(0, 8)}…`;

export class SessionRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly logger: Logger;

  constructor(private readonly options: SessionRegistryOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /**
   * A new session, or the detached one `resumeSessionId` names, with its
   * events going to `sink`. Throws `unknownSession` for an unknown or expired
   * id and `sessionAttached` for one another connection holds. A new session
   * gets `newSessionId` (the id an answer already sent named, see `ServerSession.adopt`).
   */
  attach(resumeSessionId: string | undefined, sink: ProcessEventSink, newSessionId = randomUuid()): Attached {
    if (resumeSessionId === undefined) {
      const sessionId = newSessionId;
      const processes = new SessionProcesses(this.options.processes);
      processes.attach(sink);
      this.entries.set(sessionId, { processes });
      return { sessionId, processes, generation: 1 };
    }
    const entry = this.entries.get(resumeSessionId);
    if (!entry) throw Errors.unknownSession(resumeSessionId);
    if (entry.processes.attached) {
      this.options.onContested?.(resumeSessionId);
      throw Errors.sessionAttached(resumeSessionId);
    }
    clearTimeout(entry.expiry);
    const generation = entry.processes.generation;
    entry.processes.attach(sink);
    this.logger.info(`session ${logName(resumeSessionId)} resumed`);
    return { sessionId: resumeSessionId, processes: entry.processes, generation };
  }

  release(sessionId: string, how: Release): Promise<void> {
    const entry = this.entries.get(sessionId);
    if (!entry) return Promise.resolve();
    if (how === 'detach' && this.options.detachedTtlMs > 0) {
      entry.processes.detach();
      entry.expiry = setTimeout(() => {
        this.logger.info(`session ${logName(sessionId)} was not resumed in time; ending its processes`);
        void this.end(sessionId, 'drain');
      }, this.options.detachedTtlMs);
      this.logger.info(`session ${logName(sessionId)} detached; it can be resumed for ${this.options.detachedTtlMs} ms`);
      return Promise.resolve();
    }
    return this.end(sessionId, how === 'drain' ? 'drain' : 'kill');
  }

  /** Ends every session, attached or not (the listener is closing). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((sessionId) => this.end(sessionId, 'drain')));
  }

  private end(sessionId: string, how: 'drain' | 'kill'): Promise<void> {
    const entry = this.entries.get(sessionId);
    if (!entry) return Promise.resolve();
    this.entries.delete(sessionId);
    clearTimeout(entry.expiry);
    // Paused children (a detached session) must be read again to reach their end of output.
    entry.processes.manager.resumeAll();
    if (how === 'drain') return entry.processes.manager.shutdown();
    entry.processes.manager.killAll();
    return Promise.resolve();
  }
}
