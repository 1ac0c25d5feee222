import { describe, expect, it } from 'vitest';
import { ServerGeneration } from '../../../src/client/server-generation.js';

describe('ServerGeneration', () => {
  const generation2 = ServerGeneration.fromInitialize({ environmentInfo: { cwd: 'file:///srv/work' } });

  it('reads the server cwd from its URI', () => {
    expect(generation2.cwd('sub')).toBe('file:///srv/work/sub');
  });

  it('decodes paths in answers as they are on this machine: `|` and `:` are characters, not a drive', () => {
    expect(generation2.fromServer('file:///q|')).toBe('/q|');
    expect(generation2.fromServer('file:///c:')).toBe('/c:');
    expect(generation2.fromServer('file:///c:/x')).toBe('/c:/x');
    expect(generation2.fromServer('file:///q|/inner')).toBe('/q|/inner');
    expect(generation2.fromServer('file:///a%20b/%E2%82%AC')).toBe('/a b/€');
    expect(generation2.fromServer('/native/as/is')).toBe('/native/as/is');
  });

  it('sends what it decodes back to the same path', () => {
    for (const native of ['/q|', '/c|/x', '/c:', '/[slug]/name~', '/a b/%/€']) {
      expect(generation2.fromServer(generation2.path(native))).toBe(native);
    }
  });
});
