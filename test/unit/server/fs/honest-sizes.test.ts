import { describe, expect, it } from 'vitest';
import { sizesAreHonest } from '../../../../src/server/fs/honest-sizes.js';

describe('sizesAreHonest', () => {
  it('trusts the sizes of ordinary file systems, not those of /proc and /sys, nor of a directory it cannot ask', async () => {
    expect(await sizesAreHonest('/dev/shm')).toBe(true); // tmpfs
    expect(await sizesAreHonest(Buffer.from('/proc/self'))).toBe(false);
    expect(await sizesAreHonest('/sys')).toBe(false);
    expect(await sizesAreHonest('/nonexistent/dir')).toBe(false);
  });
});
