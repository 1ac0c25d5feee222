/**
 * The guardian: a tiny `sh` in its own session that outlives a crashed server
 * just long enough to SIGKILL every process group the server registered, and
 * every process left in the sessions those groups lead.
 *
 * Node has no parent-death signal, and `setpriv --pdeathsig` would only reach
 * the direct child (and would hide argv[0] behind a wrapper). The guardian
 * waits for EOF on its stdin (the server exited, however it died), then
 * reads the registry and kills what is still registered.
 *
 * The registry is an unlinked temporary file shared with the guardian as
 * its fd 3: `+pgid` (a live group) and `=pgid` (the leader was reaped: what
 * it left in its group and session is killed too, unless a stranger took the
 * number since, as `kill.ts` decides) lines written with positional writes,
 * so the shared file offset stays at 0 for the guardian's final read; the
 * last line about a number counts. What is forgotten goes at the next
 * rewrite of the file. Writing to a file wakes nobody; the pipe this
 * replaced woke the guardian twice per process, which cost a quarter of a
 * millisecond per spawn here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { perlExec } from './perl.js';
import { randomUuid } from '../../protocol/random-ids.js';

const SCRIPT = `
trap '' HUP INT TERM PIPE
while read -r _; do :; done
groups=' '
reaped=' '
while IFS= read -r line; do
  g=\${line#?}
  case $groups in *" $g "*) groups="\${groups%% $g *} \${groups#* $g }" ;; esac
  case $reaped in *" $g "*) reaped="\${reaped%% $g *} \${reaped#* $g }" ;; esac
  case $line in
    +*) groups="$groups$g " ;;
    =*) reaped="$reaped$g " ;;
  esac
done <&3
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
# A reaped leader's number stands for its group and session only while no process has it.
for g in $reaped; do
  [ -e "/proc/$g" ] && continue
  kill -KILL "-$g" 2>/dev/null
  groups="$groups$g "
done
# Each group leads its own session; job-control jobs left it for other groups of that session.
for p in /proc/[0-9]*; do
  read -r stat 2>/dev/null <"$p/stat" || continue
  set -- \${stat##*) }
  case $groups in *" $4 "*) kill -KILL "\${p#/proc/}" 2>/dev/null ;; esac
done
`;

/** Past this size the registry is rewritten with only the live groups. */
const COMPACT_AT_BYTES = 64 * 1024;

export class Guardian {
  private child: ChildProcess | undefined;
  private started = false;
  private registry: number | undefined;
  private position = 0;
  private readonly live = new Set<number>();
  private readonly reaped = new Set<number>();

  /** `compactAtBytes`: when to rewrite the registry (tests make it small). */
  constructor(private readonly compactAtBytes = COMPACT_AT_BYTES) {}

  /**
   * Starts the guardian now, before this server opens a PTY it could inherit.
   * `closeDescriptors`: whether it must close what it inherited above its registry (fd 3) first
   * (PTY masters, a host's descriptors: see `ProcessRuntime.childrenCloseDescriptors`).
   */
  ensure(closeDescriptors = false): void {
    if (this.started) return;
    this.started = true;
    const file = path.join(os.tmpdir(), `exec-server-guardian-${process.pid}-${randomUuid()}`);
    try {
      this.registry = fs.openSync(file, 'wx+', 0o600);
      const viaPerl = closeDescriptors ? perlExec('/bin/sh', 'sh', ['-c', SCRIPT], process.env, { closeAbove: 3 }) : undefined;
      const { file: program, args, env } = viaPerl ?? { file: '/bin/sh', args: ['-c', SCRIPT], env: process.env };
      const child = spawn(program, args, { env, detached: true, stdio: ['pipe', 'ignore', 'ignore', this.registry] });
      child.on('error', () => undefined);
      child.stdin?.on('error', () => undefined);
      child.unref();
      (child.stdin as Socket | null)?.unref();
      this.child = child;
    } catch {
      // No writable temp dir or no /bin/sh: run unguarded rather than not at all.
      this.closeRegistry();
    } finally {
      // unlinkSync, not rmSync: rmSync loads Node's rimraf on first use, at every server's start.
      try {
        fs.unlinkSync(file);
      } catch {
        // never made
      }
    }
  }

  watch(pgid: number): void {
    this.ensure();
    // A number reaped before and taken again: it stands for the new group now.
    this.reaped.delete(pgid);
    this.live.add(pgid);
    this.append(`+${pgid}\n`);
  }

  /** The group's leader was reaped: what it left behind is still to be killed if the server dies (`=` lines). */
  reap(pgid: number): void {
    this.live.delete(pgid);
    this.reaped.add(pgid);
    this.record(`=${pgid}\n`);
  }

  /**
   * What these reaped leaders left is gone (the server killed it, or their groups are empty): the
   * guardian forgets them, by a rewrite of the registry. A live group is not touched: its number
   * may be another session's now.
   */
  forget(pgids: Iterable<number>): void {
    for (const pgid of pgids) this.reaped.delete(pgid);
    this.rewrite();
  }

  /** Appends `lines`, or rewrites the registry once it has grown past `compactAtBytes`. */
  private record(lines: string): void {
    if (this.position < this.compactAtBytes) this.append(lines);
    else this.rewrite();
  }

  /**
   * The registry with only what is still known. Truncating first means a crash mid-rewrite can
   * miss a group, but never leaves a torn line that would name a stranger's group.
   */
  private rewrite(): void {
    this.position = 0;
    if (this.registry !== undefined) fs.ftruncateSync(this.registry, 0);
    const lines = [...[...this.live].map((group) => `+${group}\n`), ...[...this.reaped].map((group) => `=${group}\n`)];
    this.append(lines.join(''));
  }

  private append(lines: string): void {
    if (this.registry === undefined || lines === '') return;
    try {
      this.position += fs.writeSync(this.registry, lines, this.position);
    } catch {
      this.closeRegistry(); // a full disk: carry on unguarded rather than fail the start
    }
  }

  /** Ends the guardian after the server has killed everything itself. */
  stop(): void {
    this.child?.stdin?.end();
    this.closeRegistry();
  }

  private closeRegistry(): void {
    if (this.registry !== undefined) fs.closeSync(this.registry);
    this.registry = undefined;
  }
}
