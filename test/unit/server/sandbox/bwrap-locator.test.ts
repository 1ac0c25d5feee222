import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BwrapLocator } from '../../../../src/server/sandbox/bwrap-locator.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function executable(dir: string, name = 'bwrap'): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, '#!/bin/sh\n', { mode: 0o755 });
  return file;
}

describe('BwrapLocator', () => {
  it('keeps the bwrap it found: one put earlier on PATH later is not taken, and none is taken once it is gone', () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'bwrap-locator-'));
    dirs.push(base);
    const [early, late] = [path.join(base, 'early'), path.join(base, 'late')];
    const real = executable(late);
    const savedPath = process.env.PATH;
    process.env.PATH = `${early}:${late}`;
    try {
      const locator = new BwrapLocator();
      expect(locator.find(undefined)).toBe(real);
      executable(early); // planted where PATH looks first
      expect(locator.find(undefined)).toBe(real);
      expect(new BwrapLocator().find(undefined)).toBe(path.join(early, 'bwrap')); // a fresh lookup would take it
      fs.rmSync(real);
      expect(locator.find(undefined)).toBeUndefined();
      expect(locator.find(real)).toBeUndefined(); // an explicit one is looked up on its own
    } finally {
      process.env.PATH = savedPath;
    }
  });
});
