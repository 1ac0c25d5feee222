import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUriReference, resolveReference } from '../../../../src/server/http/uri-reference.js';

// Each case's verdict is what Codex 0.134 made of it as a redirect's `location`
// (followed or refused; see test/http-redirects-gen1.test.ts for the side-by-side run).
const TAKEN = [
  '/ok',
  '?x',
  '#y',
  '',
  './a/../b',
  '/a?b?c',
  '/a%7C',
  'http:foo',
  'https:',
  '//127.0.0.1:1/',
  'foo://[::1]:80/',
  'foo://[v1.x]/',
  'foo://h:99999/',
  'foo://u%41@h/',
  'mailto:',
  'urn:isbn:123',
  'javascript:alert(1)',
];
const REFUSED = [
  '/a|b',
  '/a b',
  '/a%zz',
  '/%',
  '/a#b#c',
  '/a#b[c',
  '1foo:x',
  'a b:c',
  '//127.0.0.1:x/',
  'foo://h:x/',
  'foo://[::1/',
  'foo://[zz]/',
  'foo://[::1]x/',
  'foo://[::1%25eth0]/',
  'foo://h/a^b',
  'foo://h/a`b',
  'foo://h/a{b}',
  'foo://h/a\\b',
  'foo://h/?a<b',
  'foo://h/a"b',
];

describe('isUriReference (RFC 3986)', () => {
  it('takes what the reference follows or names, and refuses what it answers as it is', () => {
    for (const text of TAKEN) expect([text, isUriReference(text)]).toEqual([text, true]);
    for (const text of REFUSED) expect([text, isUriReference(text)]).toEqual([text, false]);
  });

  it('refuses any text with a character RFC 3986 never allows, wherever it is', () => {
    const outside = fc.constantFrom(' ', '|', '^', '`', '{', '}', '<', '>', '"', '\\', '\u00e9', '\n');
    const text = fc.string({ unit: fc.constantFrom('a', '/', '?', '#', ':', '@', '%41', '.', '-') });
    fc.assert(fc.property(text, outside, text, (before, bad, after) => !isUriReference(`${before}${bad}${after}`)));
  });

  it('takes every absolute URI built from its grammar', () => {
    const word = fc.string({
      unit: fc.constantFrom('a', 'Z', '0', '-', '.', '_', '~', '!', '$', '&', "'", '(', ')', '*', '+', ',', ';', '=', '%2F'),
    });
    const uri = fc
      .tuple(word, fc.nat(99999), fc.array(word, { maxLength: 4 }), word, word)
      .map(([host, port, segments, query, fragment]) => `s+.-://u:p@${host}:${port}/${segments.join('/')}?${query}/?#${fragment}:@`);
    fc.assert(fc.property(uri, (text) => isUriReference(text)));
  });
});

describe('resolveReference (RFC 3986 section 5.2)', () => {
  const base = 'http://a/b/c/d;p?q';
  // Section 5.4's examples, normal and abnormal.
  const examples: Array<[string, string]> = [
    ['g:h', 'g:h'],
    ['g', 'http://a/b/c/g'],
    ['./g', 'http://a/b/c/g'],
    ['g/', 'http://a/b/c/g/'],
    ['/g', 'http://a/g'],
    ['//g', 'http://g'],
    ['?y', 'http://a/b/c/d;p?y'],
    ['g?y', 'http://a/b/c/g?y'],
    ['#s', 'http://a/b/c/d;p?q#s'],
    ['g#s', 'http://a/b/c/g#s'],
    ['g?y#s', 'http://a/b/c/g?y#s'],
    [';x', 'http://a/b/c/;x'],
    ['g;x', 'http://a/b/c/g;x'],
    ['g;x?y#s', 'http://a/b/c/g;x?y#s'],
    ['', 'http://a/b/c/d;p?q'],
    ['.', 'http://a/b/c/'],
    ['./', 'http://a/b/c/'],
    ['..', 'http://a/b/'],
    ['../', 'http://a/b/'],
    ['../g', 'http://a/b/g'],
    ['../..', 'http://a/'],
    ['../../', 'http://a/'],
    ['../../g', 'http://a/g'],
    ['../../../g', 'http://a/g'],
    ['../../../../g', 'http://a/g'],
    ['/./g', 'http://a/g'],
    ['/../g', 'http://a/g'],
    ['g.', 'http://a/b/c/g.'],
    ['.g', 'http://a/b/c/.g'],
    ['g..', 'http://a/b/c/g..'],
    ['..g', 'http://a/b/c/..g'],
    ['./../g', 'http://a/b/g'],
    ['./g/.', 'http://a/b/c/g/'],
    ['g/./h', 'http://a/b/c/g/h'],
    ['g/../h', 'http://a/b/c/h'],
    ['g;x=1/./y', 'http://a/b/c/g;x=1/y'],
    ['g;x=1/../y', 'http://a/b/c/y'],
    ['g?y/./x', 'http://a/b/c/g?y/./x'],
    ['g?y/../x', 'http://a/b/c/g?y/../x'],
    ['g#s/./x', 'http://a/b/c/g#s/./x'],
    ['g#s/../x', 'http://a/b/c/g#s/../x'],
    ['http:g', 'http:g'],
  ];

  it('resolves every example of section 5.4 as the RFC gives it (a scheme makes a reference absolute, even `http:g`)', () => {
    for (const [reference, resolved] of examples) expect([reference, resolveReference(base, reference)]).toEqual([reference, resolved]);
  });

  it('keeps an empty query and an empty fragment, which a URL parser may drop', () => {
    expect(resolveReference('http://a/b', '/c?')).toBe('http://a/c?');
    expect(resolveReference('http://a/b', '/c?#')).toBe('http://a/c?#');
    expect(resolveReference('http://a', 'g')).toBe('http://a/g');
  });
});
