/**
 * The guardian: a tiny `sh` in its own session that outlives a crashed server
 * just long enough to SIGKILL every process group the server registered.
 *
 * Node has no parent-death signal, and `setpriv --pdeathsig` would only reach
 * the direct child (and would hide argv[0] behind a wrapper). The guardian
 * reads `+pgid` / `-pgid` lines on its stdin; when that pipe reaches EOF
 * (the server exited, however it died) it kills what is still registered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

const SCRIPT = `
trap '' HUP INT TERM PIPE
groups=' '
while IFS= read -r line; do
  case $line in
    +*) groups="$groups\${line#+} " ;;
    -*) g=\${line#-}
        case $groups in *" $g "*) groups="\${groups%% $g *} \${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
`;

export class Guardian {
  private child: ChildProcess | undefined;

  /** Starts the guardian now, before any PTY descriptor exists that it could inherit. */
  ensure(): ChildProcess | undefined {
    if (this.child) return this.child;
    try {
      const child = spawn('/bin/sh', ['-c', SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
      child.on('error', () => undefined);
      child.stdin?.on('error', () => undefined);
      child.unref();
      (child.stdin as Socket | null)?.unref();
      this.child = child;
    } catch {
      return undefined; // no /bin/sh: run unguarded rather than not at all
    }
    return this.child;
  }

  watch(pgid: number): void {
    this.ensure()?.stdin?.write(`+${pgid}\n`);
  }

  release(pgid: number): void {
    this.child?.stdin?.write(`-${pgid}\n`);
  }

  /** Ends the guardian after the server has killed everything itself. */
  stop(): void {
    this.child?.stdin?.end();
  }
}
