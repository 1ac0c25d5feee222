/**
 * The line protocol between the server and its spawner (`spawner.pl`), one
 * message per line unless noted.
 *
 * server → spawner
 *   `<n>\n` then n bytes: NUL-separated id, file, cwd, stdin ("1" pipe /
 *   "0" /dev/null), argc, argv[0..argc), envc, then envc keys and values
 *   `R <id>`: the server has opened its ends; close ours
 *   `P <batch> <count>`: make `count` pipes and hold them as `<batch>.<i>`
 * spawner → server
 *   `S <id> <pid> <stdin fd or -> <stdout fd> <stderr fd>`: running; the
 *   fds are open in the spawner until `R`, for the server to reopen
 *   through /proc/<spawner>/fd/<n>
 *   `F <id> <errno>`: chdir or exec failed
 *   `X <pid> <wait status>`: a child was reaped
 *   `P <batch> <read fd> <write fd> …`: the pipes made (fewer if pipe()
 *   failed), held until `R <batch>.<i>`
 */
import type { ExitStatus, SpawnRequest } from './child.js';

export type SpawnerMessage =
  | { type: 'started'; id: string; pid: number; stdinFd: number | undefined; stdoutFd: number; stderrFd: number }
  | { type: 'failed'; id: string; errno: number }
  | { type: 'reaped'; pid: number; status: ExitStatus }
  | { type: 'pipes'; batch: string; pipes: Array<{ id: string; readFd: number; writeFd: number }> };

/** A start request: the length line and the NUL-separated fields. */
export function encodeStart(id: string, request: SpawnRequest): Buffer {
  const env = Object.entries(request.env);
  const fields = [
    id,
    request.file,
    request.cwd,
    request.pipeStdin ? '1' : '0',
    String(request.args.length + 1),
    request.argv0,
    ...request.args,
    String(env.length),
    ...env.flat(),
  ];
  const payload = Buffer.from(fields.join('\0'));
  return Buffer.concat([Buffer.from(`${payload.length}\n`), payload]);
}

export const encodeRelease = (id: string): string => `R ${id}\n`;
export const encodePipeRequest = (batch: string, count: number): string => `P ${batch} ${count}\n`;

/** A wait(2) status as an exit code or the signal that ended the child. */
export function decodeWaitStatus(status: number): ExitStatus {
  return (status & 0x7f) === 0 ? { code: (status >> 8) & 0xff } : { signal: status & 0x7f };
}

/** One line from the spawner (without its newline); undefined for anything unknown. */
export function parseSpawnerLine(line: string): SpawnerMessage | undefined {
  const [kind, first, ...rest] = line.split(' ');
  if (first === undefined) return undefined;
  switch (kind) {
    case 'S': {
      const [pid, stdinFd, stdoutFd, stderrFd] = rest;
      if (stderrFd === undefined) return undefined;
      return {
        type: 'started',
        id: first,
        pid: Number(pid),
        stdinFd: stdinFd === '-' ? undefined : Number(stdinFd),
        stdoutFd: Number(stdoutFd),
        stderrFd: Number(stderrFd),
      };
    }
    case 'F':
      return { type: 'failed', id: first, errno: Number(rest[0]) };
    case 'X':
      return { type: 'reaped', pid: Number(first), status: decodeWaitStatus(Number(rest[0])) };
    case 'P': {
      const pipes = [];
      for (let i = 0; i + 1 < rest.length; i += 2)
        pipes.push({ id: `${first}.${i / 2}`, readFd: Number(rest[i]), writeFd: Number(rest[i + 1]) });
      return { type: 'pipes', batch: first, pipes };
    }
    default:
      return undefined;
  }
}

/** Splits the spawner's output into complete lines, keeping a partial one for the next chunk. */
export class LineSplitter {
  private partial = '';

  push(text: string): string[] {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop()!;
    return lines;
  }
}
