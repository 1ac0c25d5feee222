import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileHandles } from '../../../../src/server/fs/file-handles.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-server-file-handles-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** This process's descriptors open on `file`. */
function descriptorsOn(file: string): string[] {
  return fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false; // closed meanwhile (the listing's own descriptor)
    }
  });
}

describe('FileHandles', () => {
  it('closes a file whose open was under way when the connection ended, and refuses it', async () => {
    const file = path.join(dir, 'late');
    fs.writeFileSync(file, 'x');
    const handles = new FileHandles();
    const opening = handles.openFile('h', file, 'read');
    await handles.closeAll();
    await expect(opening).rejects.toThrow(/connection ended while the file was being opened/);
    expect(descriptorsOn(file)).toEqual([]);
  });

  it('runs no truncation for an open refused for its id', async () => {
    const file = path.join(dir, 'kept');
    fs.writeFileSync(file, 'x');
    const handles = new FileHandles();
    await handles.openFile('h', file, 'read');
    let truncated = false;
    const truncate = async () => {
      truncated = true;
      return { dev: 0, ino: 0 };
    };
    await expect(handles.openFile('h', file, 'truncated', truncate)).rejects.toThrow('file handle `h` already exists');
    expect(truncated).toBe(false);
    await handles.closeAll();
  });
});
