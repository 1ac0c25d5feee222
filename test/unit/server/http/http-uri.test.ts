import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asHttpUri } from '../../../../src/server/http/http-uri.js';

describe('asHttpUri (the http crate reading a serialized URL)', () => {
  it("gives `Uri`'s form: no fragment, `/` for an empty path, lower-case http schemes, the rest as it is", () => {
    expect(asHttpUri('foo://h#f')).toBe('foo://h/');
    expect(asHttpUri('foo://h?q#f')).toBe('foo://h/?q');
    expect(asHttpUri('HTTP://h/P')).toBe('http://h/P');
    expect(asHttpUri('FOO://H/P')).toBe('FOO://H/P');
    expect(asHttpUri('foo://u%41@h/')).toBe('foo://u%41@h/');
    expect(asHttpUri('foo://[::1]:80/')).toBe('foo://[::1]:80/');
  });

  it('reads text without `://` as a bare authority, which must be all of it', () => {
    expect(asHttpUri('mailto:a@b')).toBe('mailto:a@b');
    expect(asHttpUri('javascript:alert(1)')).toBe('javascript:alert(1)');
    expect(asHttpUri('mailto:')).toBe('mailto:');
    expect(asHttpUri('urn:isbn:123')).toBeUndefined(); // two port colons
    expect(asHttpUri('data:text/plain,hi')).toBeUndefined(); // a path after it
    expect(asHttpUri('file:/x')).toBeUndefined();
  });

  it('refuses what the crate refuses: an empty authority, a `%` in the host, stray brackets or colons, a bare `@`, bad bytes', () => {
    for (const text of [
      'file:///etc/hostname',
      'ftp://',
      'foo://h%41/',
      'foo://[::1/',
      'foo://h:1:2/',
      'foo://u@/',
      'foo://h/a b',
      'foo://h/a<b',
      'foo://h/?a"b',
      'c:d e',
    ]) {
      expect([text, asHttpUri(text)]).toEqual([text, undefined]);
    }
    expect(asHttpUri(`foo://h/${'a'.repeat(65_534)}`)).toBeUndefined();
    expect(asHttpUri(`${'s'.repeat(65)}://h/`)).toBeUndefined();
  });

  it('is stable: its form reads back as itself, and never holds a fragment', () => {
    const unit = fc.constantFrom('a', 'B', '0', ':', '/', '?', '#', '@', '[', ']', '%', '.', '|', '{', '"', ' ', '`');
    fc.assert(
      fc.property(fc.constantFrom('foo://', 'http://', 'x:', ''), fc.string({ unit, maxLength: 30 }), (prefix, rest) => {
        const uri = asHttpUri(`${prefix}${rest}`);
        return uri === undefined || (!uri.includes('#') && asHttpUri(uri) === uri);
      }),
    );
  });
});
