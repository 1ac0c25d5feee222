import { describe, expect, it } from 'vitest';
import { randomHex, randomUuid } from '../../../src/protocol/random-ids.js';

describe('random ids', () => {
  it('makes distinct version 4 UUIDs of the RFC 4122 variant', () => {
    const made = Array.from({ length: 2000 }, () => randomUuid());
    for (const uuid of made) expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(made).size).toBe(made.length);
    // Every other hex digit takes many values: the bytes are random, not a counter.
    const digits = new Set(made.map((uuid) => uuid[0]));
    expect(digits.size).toBeGreaterThan(12);
  });

  it('makes hex ids of the asked length, distinct', () => {
    const made = Array.from({ length: 1000 }, () => randomHex(16));
    for (const id of made) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(made).size).toBe(made.length);
  });
});
