/**
 * fs/watchMissing and fs/missingChanged (generation 2): our server, and the
 * same scenarios on Codex 0.169.0's exec-server when it is installed (the
 * answers and notifications equal).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Contestant, contestants, hasReference } from './support/differential.js';
import { ServerProcess } from './support/server-process.js';

let root: string;
let scenarios = 0;

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'watch-')));
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

type Step =
  | ['watch', number, string[], string?]
  | ['touch' | 'mkdir' | 'rm', string]
  | ['symlink', string, string?] // to `nowhere` unless a target is given
  | ['mv', string, string]
  | ['chmod', string] // to 0700
  | ['notified'] // waits (up to 5 s) for the next fs/missingChanged
  | ['quiet']; // a round trip, then a short pause: no notification may have come

const notifications = (server: ServerProcess) => server.messages.filter((message) => message.method === 'fs/missingChanged');

/** Runs the steps on a fresh connection of every contestant, in its own directory; what each saw. */
async function scenario(files: string[], steps: Step[], compare = true): Promise<unknown[]> {
  const seen: Record<string, unknown[]> = {};
  const servers: Contestant[] = await contestants();
  for (const { name, server } of servers) {
    const dir = path.join(root, `s${++scenarios}`);
    fs.mkdirSync(dir);
    for (const file of files) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), 'x');
    }
    // An absolute path stays as it is (a pseudo file system's).
    const at = (relative: string) => (path.isAbsolute(relative) ? relative : path.join(dir, relative));
    const uri = (relative: string) => pathToFileURL(at(relative)).href;
    const log: unknown[] = [];
    let consumed = notifications(server).length;
    for (const step of steps) {
      if (step[0] === 'watch') {
        const [, watchId, missing, present] = step;
        const params = { watchId, missing: missing.map(uri), ...(present ? { present: uri(present) } : {}) };
        log.push(await server.request('fs/watchMissing', params));
      } else if (step[0] === 'touch') fs.writeFileSync(at(step[1]), 'y');
      else if (step[0] === 'mkdir') fs.mkdirSync(at(step[1]));
      else if (step[0] === 'rm') fs.rmSync(at(step[1]), { recursive: true });
      else if (step[0] === 'symlink') fs.symlinkSync(step[2] ?? 'nowhere', at(step[1]));
      else if (step[0] === 'mv') fs.renameSync(at(step[1]), at(step[2]));
      else if (step[0] === 'chmod') fs.chmodSync(at(step[1]), 0o700);
      else if (step[0] === 'notified') {
        const count = consumed;
        await server.waitFor((message) => message.method === 'fs/missingChanged' && notifications(server).length > count, 5000);
        log.push(
          ...notifications(server)
            .slice(consumed)
            .map((message) => message.params),
        );
        consumed = notifications(server).length;
      } else {
        await server.request('environment/status', null);
        await new Promise((resolve) => setTimeout(resolve, 150));
        log.push({ quiet: notifications(server).length === consumed });
        consumed = notifications(server).length;
      }
    }
    seen[name] = log;
  }
  await Promise.all(servers.map((contestant) => contestant.dispose()));
  if (hasReference && compare) expect(seen.ours).toEqual(seen.reference);
  return seen.ours!;
}

describe('fs/watchMissing', () => {
  it('notifies once when a missing file appears', async () => {
    expect(
      await scenario([], [['watch', 1, ['later.txt']], ['touch', 'later.txt'], ['notified'], ['touch', 'later.txt'], ['quiet']]),
    ).toEqual([{ watching: true }, { watchId: 1 }, { quiet: true }]);
  });

  it('notifies when a missing directory on the way appears, or a dangling symlink', async () => {
    expect(await scenario([], [['watch', 5, ['deep/er/file.txt']], ['mkdir', 'deep'], ['notified']])).toEqual([
      { watching: true },
      { watchId: 5 },
    ]);
    expect(await scenario([], [['watch', 6, ['link']], ['symlink', 'link'], ['notified']])).toEqual([{ watching: true }, { watchId: 6 }]);
  });

  it('notifies when the present path goes or changes', async () => {
    for (const change of [
      ['touch', 'here.txt'],
      ['rm', 'here.txt'],
    ] as Step[]) {
      expect(await scenario(['here.txt'], [['watch', 2, ['gone'], 'here.txt'], change, ['notified']]), change[0]).toEqual([
        { watching: true },
        { watchId: 2 },
      ]);
    }
  });

  it('notifies when a directory on the way is moved or its attributes change, not when others beside it do', async () => {
    for (const change of [
      ['mv', 'p', 'moved'],
      ['chmod', 'p/q'],
    ] as Step[]) {
      const seen = await scenario(
        ['p/q/keep'],
        [['watch', 4, ['p/q/x']], ['mkdir', 'p/other'], ['touch', 'p/q/other'], ['quiet'], change, ['notified']],
      );
      expect(seen, change.join(' ')).toEqual([{ watching: true }, { quiet: true }, { watchId: 4 }]);
    }
  });

  it('ignores unrelated names in the same directory', async () => {
    expect(await scenario([], [['watch', 3, ['wanted']], ['touch', 'unrelated'], ['quiet'], ['touch', 'wanted'], ['notified']])).toEqual([
      { watching: true },
      { quiet: true },
      { watchId: 3 },
    ]);
  });

  it('answers false for existing, empty and absent cases, and keeps one watch per connection by increasing id', async () => {
    expect(
      await scenario(
        ['exists.txt'],
        [
          ['watch', 0, ['a']],
          ['watch', 10, ['exists.txt']],
          ['watch', 11, []],
          ['watch', 12, ['a'], 'absent'],
          ['watch', 13, ['a']],
          ['watch', 13, ['b']],
          ['watch', 12, ['b']],
          ['watch', 14, ['b']],
          ['touch', 'a'],
          ['quiet'],
          ['touch', 'b'],
          ['notified'],
        ],
      ),
    ).toEqual([
      { watching: false },
      { watching: false },
      { watching: false },
      { watching: false },
      { watching: true },
      { watching: false },
      { watching: false },
      { watching: true },
      { quiet: true },
      { watchId: 14 },
    ]);
  });

  it('takes at most 64 missing paths, and at most 64 directories on the way, as the reference bounds a watch', async () => {
    const names = (count: number, name: (i: number) => string) => Array.from({ length: count }, (_, i) => name(i));
    // The directories on the way to <dir>/dN/x: `/`, each of root's, the scenario's own, then dN.
    const widest = 64 - 2 - root.split('/').filter(Boolean).length;
    expect(
      await scenario(
        names(widest + 1, (i) => `d${i}/keep`),
        [
          ['watch', 1, names(64, (i) => `m${i}`)],
          ['watch', 2, names(65, (i) => `m${i}`)],
          ['watch', 3, names(widest, (i) => `d${i}/x`)],
          ['watch', 4, names(widest + 1, (i) => `d${i}/x`)],
        ],
      ),
    ).toEqual([{ watching: true }, { watching: false }, { watching: true }, { watching: false }]);
  });
});

describe('fs/watchMissing on file systems whose changes a watch may miss', () => {
  it('refuses a path through a directory on proc, sysfs or devpts, and takes one on tmpfs', async () => {
    const seen = await scenario(
      [],
      [
        ['watch', 1, ['/proc/exec-server-absent']],
        ['watch', 2, ['/sys/exec-server-absent/x']],
        ['watch', 3, ['/dev/pts/exec-server-absent']],
        ['watch', 4, ['new'], '/proc/cpuinfo'],
        ['watch', 5, ['/dev/shm/exec-server-absent']],
        ['watch', 6, ['new'], '/dev/shm'],
      ],
    );
    expect(seen).toEqual([
      { watching: false },
      { watching: false },
      { watching: false },
      { watching: false },
      { watching: true },
      { watching: true },
    ]);
  });
});

describe('fs/watchMissing where it may not look (as nobody)', () => {
  it('answers false for a path in a directory it cannot read or search, as the reference does', async () => {
    const locked = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-locked-'));
    fs.chmodSync(locked, 0o700);
    fs.writeFileSync(path.join(locked, 'file'), 'x');
    const free = path.join(os.tmpdir(), `watch-free-absent-${process.pid}`);
    const unprivileged = await ServerProcess.started([], process.env, { uid: 65534, gid: 65534 });
    try {
      const watch = (watchId: number, missing: string, present?: string) =>
        unprivileged.request('fs/watchMissing', {
          watchId,
          missing: [pathToFileURL(missing).href],
          ...(present ? { present: pathToFileURL(present).href } : {}),
        });
      expect(await watch(1, free, path.join(locked, 'file'))).toEqual({ watching: false });
      expect(await watch(2, path.join(locked, 'sub', 'x'))).toEqual({ watching: false });
      // Readable but not searchable: its file cannot be looked at. Searchable but not readable: not watchable.
      fs.chmodSync(locked, 0o744);
      expect(await watch(3, free, path.join(locked, 'file'))).toEqual({ watching: false });
      fs.mkdirSync(path.join(locked, 'open'), { mode: 0o755 });
      fs.chmodSync(locked, 0o711);
      expect(await watch(4, path.join(locked, 'open', 'new'))).toEqual({ watching: false });
      expect(await watch(5, free)).toEqual({ watching: true });
    } finally {
      await unprivileged.dispose();
      fs.rmSync(locked, { recursive: true, force: true });
    }
  });
});

describe('fs/watchMissing when the watched directory itself goes and comes back', () => {
  it('refuses a path through a symlink: present one, or one on the way to a path', async () => {
    const seen = await scenario(
      ['d/x'],
      [
        ['symlink', 'lnd', 'd'],
        ['symlink', 'dangling'],
        ['watch', 1, ['lnd/new']],
        ['watch', 2, ['new'], 'lnd'],
        ['watch', 3, ['new'], 'lnd/x'],
        ['watch', 4, ['dangling/new']],
        ['watch', 5, ['new'], 'd/x'],
      ],
    );
    expect(seen).toEqual([{ watching: false }, { watching: false }, { watching: false }, { watching: false }, { watching: true }]);
  });

  it('still notifies for the path inside it', async () => {
    expect(
      await scenario(
        ['anc/keep'],
        [['watch', 7, ['anc/target']], ['rm', 'anc'], ['mkdir', 'anc'], ['mkdir', 'anc/target'], ['notified']],
        false,
      ),
    ).toEqual([{ watching: true }, { watchId: 7 }]);
  });
});
