/**
 * Contestants (ours and a reference, see `differential.ts`) that each work in
 * their own scratch tree, built the same way: requests that write cannot
 * change the other server's answers. `R/` in a request stands for the root.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { type Contestant, contestants, normalize } from './differential.js';
import { isInstalled } from '../../scripts/interop/install.mjs';

interface Arena extends Contestant {
  root: string;
}

export interface Arenas {
  list: Arena[];
  /** Every contestant's answer to one request, compared without times (the trees were made at different moments; the musl reference reports birth as 0). */
  both(method: string, params: Record<string, unknown>, tidy?: (answer: Record<string, unknown>) => unknown): Promise<unknown>;
  dispose(): Promise<void>;
}

/** One arena per contestant, each tree made by `build(root)`; `version` is the reference's. */
export async function arenas(version: string, build: (root: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<Arenas> {
  const compared = isInstalled(version);
  const list: Arena[] = (await contestants(env, version)).map((contestant) => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arena-')));
    build(root);
    return { ...contestant, root };
  });
  return {
    list,
    async both(method, params, tidy = (answer) => answer) {
      const answers: Record<string, unknown> = {};
      for (const { name, server, root } of list) {
        const rooted = JSON.parse(JSON.stringify(params).split('R/').join(`${root}/`));
        const response = await server.call(method, rooted);
        const {
          createdAtMs: _birth,
          modifiedAtMs: _modified,
          ...answer
        } = normalize(response.error ?? response.result, root) as Record<string, unknown>;
        answers[name] = tidy(answer);
      }
      if (compared) expect(answers.ours).toEqual(answers.reference);
      return answers.ours;
    },
    async dispose() {
      await Promise.all(list.map((arena) => arena.dispose()));
      for (const { root } of list) fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
