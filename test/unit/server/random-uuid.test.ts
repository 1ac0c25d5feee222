import { describe, expect, it } from 'vitest';
import { randomUuid } from '../../../src/server/random-uuid.js';

describe('randomUuid', () => {
  it('makes distinct version 4 UUIDs of the RFC 4122 variant', () => {
    const made = Array.from({ length: 2000 }, () => randomUuid());
    for (const uuid of made) expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(made).size).toBe(made.length);
    // Every other hex digit takes many values: the bytes are random, not a counter.
    const digits = new Set(made.map((uuid) => uuid[0]));
    expect(digits.size).toBeGreaterThan(12);
  });
});
