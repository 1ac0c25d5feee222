import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../../src/protocol/errors.js';
import { fileUriToPath, pathToFileUri } from '../../../src/protocol/path-uri.js';

/** Characters a plain URI path may hold, with dots and slashes frequent enough to make dot segments and `//`. */
const plainPath = fc
  .array(fc.constantFrom(...'ab.~/+,=@-_Z09', '/', '.', '..', '/./', '/../', '//'), { maxLength: 24 })
  .map((parts) => parts.join(''));

describe('fileUriToPath', () => {
  it('gives a plain URI the path URL parsing gives it, resolved', () => {
    fc.assert(
      fc.property(plainPath, (rest) => {
        const uri = `file:///${rest}`;
        expect(fileUriToPath(uri)).toBe(path.posix.resolve(new URL(uri).pathname));
      }),
    );
  });

  it('answers a plain URI as the full parse does (an upper-case scheme takes that way)', () => {
    fc.assert(
      fc.property(plainPath, (rest) => {
        expect(fileUriToPath(`file:///${rest}`)).toBe(fileUriToPath(`FILE:///${rest}`));
      }),
    );
  });

  it('resolves dot segments and repeated slashes', () => {
    expect(fileUriToPath('file:///a/./b/../c//d/')).toBe('/a/c/d');
    expect(fileUriToPath('file:////x')).toBe('/x');
    expect(fileUriToPath('file:///..')).toBe('/');
  });

  it('takes a plain URI of millions of segments (no regex recursion)', () => {
    expect(fileUriToPath(`file:///${'a/../'.repeat(2_000_000)}tmp`)).toBe('/tmp');
  });

  it('decodes escapes and non-ASCII as the reference does', () => {
    expect(fileUriToPath('file:///tmp/%41%2Fb')).toBe('/tmp/A/b');
    expect(fileUriToPath('file:///tmp/%ZZ')).toBe('/tmp/%ZZ');
    expect(fileUriToPath('file:///tmp/caf%C3%A9')).toBe('/tmp/café');
    expect(fileUriToPath('file://localhost/tmp')).toBe('/tmp');
  });

  it('refuses queries, fragments, other hosts, drive letters, NULs and bytes that are not UTF-8', () => {
    for (const uri of ['file:///x?y', 'file:///x#', 'file://host/x', 'file:///C:/x', 'file:///a%00b', 'file:///%FF', 'relative']) {
      expect(() => fileUriToPath(uri), uri).toThrow(ProtocolError);
    }
  });
});

describe('pathToFileUri', () => {
  it('leaves [ ] ^ | ~ raw, as the reference writes them, and encodes the rest as Node does', () => {
    expect(pathToFileUri('/w/[slug]/a^b|c~')).toBe('file:///w/[slug]/a^b|c~');
    expect(pathToFileUri('/w/%5B x#?')).toBe('file:///w/%255B%20x%23%3F');
    expect(pathToFileUri('/w/é')).toBe('file:///w/%C3%A9');
  });
});
