import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerInitialize } from '../../../src/server/early-initialize.js';
import type { SandboxSupport } from '../../../src/server/environment-info.js';

const SANDBOX: SandboxSupport = { available: true, type: 'linuxSeccomp' };
const answer = (line: string) => answerInitialize(Buffer.from(line), () => SANDBOX);

describe('answerInitialize', () => {
  it('answers a plain initialize with the session id it hands over, as one line', () => {
    const early = answer('{"id":4,"method":"initialize","params":{"clientName":"c","extra":true}}');
    expect(early).toBeDefined();
    expect(early!.answer.endsWith('}\n')).toBe(true);
    expect(early!.answer.indexOf('\n')).toBe(early!.answer.length - 1);
    const line = JSON.parse(early!.answer);
    expect(Object.keys(line)).toEqual(['id', 'result']);
    expect(line).toMatchObject({ id: 4, result: { sessionId: early!.answered.sessionId, environmentInfo: { sandbox: SANDBOX } } });
    // The params go on as they came: the server runs the request again with them.
    expect(early!.answered.params).toEqual({ clientName: 'c', extra: true });
  });

  it('gives every answer a new session id', () => {
    const ids = new Set(
      Array.from({ length: 20 }, () => answer('{"id":1,"method":"initialize","params":{"clientName":"c"}}')!.answered.sessionId),
    );
    expect(ids.size).toBe(20);
  });

  it.each([
    ['', 'an empty line'],
    [' {"id":1,"method":"initialize","params":{"clientName":"c"}}', 'a line not starting with {'],
    ['{"id":1,"method":"initialize","params":{"clientName":"é"}}', 'bytes outside ASCII'],
    ['{"id":1,"method":"initialize","params":{"clientName":"\\u0063"}}', 'a \\u escape'],
    ['{"id":1,"method":"initialize","params":{"clientName":"c"},"sandbox":1,"sandbox":2}', 'a sandbox key'],
    ['{"id":1,"method":"initialize","params":{"clientName":"c"}', 'JSON cut short'],
    ['{"method":"initialize","params":{"clientName":"c"}}', 'no id'],
    ['{"id":1.5,"method":"initialize","params":{"clientName":"c"}}', 'an id the server refuses'],
    ['{"id":1,"method":"initialized","params":{}}', 'another method'],
    ['{"id":1,"method":"initialize","params":{}}', 'params without clientName'],
    ['{"id":1,"method":"initialize"}', 'no params'],
    ['{"id":1,"method":"initialize","params":{"clientName":"c","resumeSessionId":"s"}}', 'a resume'],
  ])('leaves %j to the server (%s)', (line) => {
    expect(answer(line)).toBeUndefined();
  });

  it('never throws, whatever the line', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.json(),
          fc.string(),
          fc.jsonValue().map((params) => JSON.stringify({ id: 1, method: 'initialize', params })),
        ),
        (line) => {
          const early = answer(line);
          if (early) expect(JSON.parse(early.answer).result.sessionId).toBe(early.answered.sessionId);
        },
      ),
      { numRuns: 300 },
    );
  });
});
