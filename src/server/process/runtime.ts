/**
 * What the process managers of one server share with the machine: the
 * guardian that outlives a crashed server, the spawner and its pipe factory,
 * and the registry of open PTY masters. Whoever builds a server (the CLI,
 * an executor) creates one and passes it in; nothing starts until the first
 * process does, or until `prepare()`.
 */
import { BufferPool } from '../../transport/buffer-pool.js';
import { BwrapLocator } from '../sandbox/bwrap-locator.js';
import { SyntheticMounts } from '../sandbox/synthetic-mounts.js';
import { Guardian } from './guardian.js';
import { OUTPUT_SLAB_BYTES } from './output-pipe.js';
import { PipePool } from './pipe-pool.js';
import { Spawner } from './spawner.js';

/** `auto`: the spawner once the server is big or PTYs are open (see `useSpawner`). */
export type SpawnerMode = 'auto' | 'always' | 'never';

/**
 * Past this resident size a fork of the server costs more than the trip to
 * the spawner (`npm run bench -- --only spawn` compares both). RSS is only a
 * proxy: Buffers slow a fork far more than V8 heap pages do.
 */
const SPAWNER_ABOVE_RSS_BYTES = 96 * 1024 * 1024;

/** Every live PTY master of this process, whichever runtime opened it: descriptors are per process. */
const processWideMasters = new Set<number>();

/**
 * Master descriptors of live PTYs. forkpty opens them without close-on-exec
 * and Node cannot set that flag, so pipe children must close them (see
 * `pipe-child.ts`). Descriptors belong to the process, not to a server, so
 * every runtime lists every runtime's: a child of one server must not
 * inherit another server's terminals (it could type into them).
 */
export class PtyMasters {
  add(fd: number): void {
    processWideMasters.add(fd);
  }

  delete(fd: number): void {
    processWideMasters.delete(fd);
  }

  /** The masters open in this process. */
  list(): number[] {
    return [...processWideMasters];
  }
}

export interface ProcessRuntimeOptions {
  /** Default `auto`; the CLI takes `EXEC_SERVER_SPAWNER=always|never` as an override. */
  spawnerMode?: SpawnerMode;
  /** Runs once, before the first child of this runtime (the guardian) is spawned. */
  beforeFirstSpawn?: () => void;
  /**
   * Set when this process holds no descriptor without close-on-exec but its
   * PTY masters: the CLI closes what it inherited at start-up. Otherwise (an
   * in-process server, whose host may hold any: Node marks close-on-exec
   * only the low descriptors it inherits) every child this process spawns
   * itself closes all descriptors above its stdio before it runs.
   */
  inheritedDescriptorsClosed?: boolean;
  /** The bwrap already looked up (the CLI's, which answered `initialize` before the runtime existed); default: one of its own. */
  bwraps?: BwrapLocator;
}

export class ProcessRuntime {
  readonly guardian = new Guardian();
  readonly ptyMasters = new PtyMasters();
  /** The sandboxes' stand-ins for missing protected paths, shared by every confined child and fs helper of this process. */
  readonly syntheticMounts = new SyntheticMounts();
  /** The bwrap confined children run with, kept once found. */
  readonly bwraps: BwrapLocator;
  /** Slabs that retained output is packed into, reused once retention lets go of them (see `output-log.ts`). */
  readonly outputSlabs = new BufferPool(OUTPUT_SLAB_BYTES, 32);
  readonly spawnerMode: SpawnerMode;
  private spawnerState: Spawner | null | undefined;
  private pool: PipePool | undefined;
  private warnedSocketpairs = false;
  private prepared = false;
  /** Set by `stop`: its owner is going, and nothing more is started. */
  stopped = false;

  constructor(private readonly options: ProcessRuntimeOptions = {}) {
    this.spawnerMode = options.spawnerMode ?? 'auto';
    this.bwraps = options.bwraps ?? new BwrapLocator();
  }

  /**
   * Starts the guardian and the first pipes: before any PTY master exists
   * that they could inherit (every start calls it first; a server calls it
   * once its first answer is out, to be ready without delaying that answer).
   */
  prepare(): void {
    if (this.prepared) return;
    this.prepared = true;
    this.options.beforeFirstSpawn?.();
    // The guardian first: Node's spawn returns once the child has exec'd, and a small sh forked
    // while perl starts on the other core waited for a CPU (10 ms instead of 3 in a timeline of a
    // first command). perl closes what it inherited itself, the guardian's descriptors included.
    this.guardian.ensure(this.childrenCloseDescriptors());
    this.pipePool()?.prefill();
  }

  /**
   * Whether a child this process spawns now must close the descriptors above
   * its stdio before it runs (through perl, `perl.ts`): while PTY masters are
   * open (forkpty opens them without close-on-exec), and always in a process
   * that may hold others (see `inheritedDescriptorsClosed`). The spawner's
   * children need not: it closes what it inherited when it starts.
   */
  childrenCloseDescriptors(): boolean {
    return !this.options.inheritedDescriptorsClosed || this.ptyMasters.list().length > 0;
  }

  /** The spawner, launched on first use; undefined without perl or /proc, or once it died. */
  spawner(): Spawner | undefined {
    if (this.spawnerState === undefined) this.spawnerState = Spawner.launch() ?? null;
    if (this.spawnerState && !this.spawnerState.alive) this.spawnerState = null;
    return this.spawnerState ?? undefined;
  }

  /** The pipe factory for children Node spawns; undefined without the spawner. */
  pipePool(): PipePool | undefined {
    const spawner = this.spawner();
    if (!spawner) return undefined;
    if (this.pool?.spawner !== spawner) this.pool = new PipePool(spawner);
    return this.pool;
  }

  /**
   * Whether the spawner starts the next pipe child: always in a process that
   * may hold descriptors not its own, and otherwise once the server is big,
   * or while PTYs are open (it needs no perl start-up to close their
   * masters: it holds none of them).
   */
  useSpawner(): boolean {
    if (this.spawnerMode !== 'auto') return this.spawnerMode === 'always';
    // In a process that may hold others' descriptors, the spawner's children are the ones born
    // without them (it closed what it inherited), with no perl start per child.
    if (!this.options.inheritedDescriptorsClosed) return true;
    return this.ptyMasters.list().length > 0 || process.memoryUsage.rss() > SPAWNER_ABOVE_RSS_BYTES;
  }

  /** Says once, on stderr, that children get socketpairs. */
  warnSocketpairs(): void {
    if (this.warnedSocketpairs) return;
    this.warnedSocketpairs = true;
    process.stderr.write(
      'exec-server: the spawner made no pipes (perl or /proc unavailable, or out of descriptors); pipe children get socketpairs, not pipes\n',
    );
  }

  /** Ends the guardian and the spawner once the owner's processes are gone. */
  stop(): void {
    this.stopped = true;
    this.guardian.stop();
    if (this.spawnerState) this.spawnerState.stop();
    this.spawnerState = null;
  }
}
