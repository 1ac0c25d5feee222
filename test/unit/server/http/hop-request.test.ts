import { describe, expect, it } from 'vitest';
import { requestPath } from '../../../../src/server/http/hop-request.js';

describe('requestPath', () => {
  it('sends the path and query, keeping an empty query and never the fragment or userinfo', () => {
    expect(requestPath(new URL('http://h/a?b=1#f'))).toBe('/a?b=1');
    expect(requestPath(new URL('http://h/a?'))).toBe('/a?');
    expect(requestPath(new URL('http://h/a?#f'))).toBe('/a?');
    expect(requestPath(new URL('http://h/a#f?x'))).toBe('/a');
    expect(requestPath(new URL('http://u:p@h/'))).toBe('/');
    expect(requestPath(new URL('http://h'))).toBe('/');
  });
});
