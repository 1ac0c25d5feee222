/**
 * The CLI's first answer. A parent waits for the answer to `initialize`
 * before anything else, and loading the whole server takes longer than
 * starting Node (`npm run bench -- --only startup`): so the CLI reads the
 * first line itself and, when it is an `initialize` the server would plainly
 * answer, answers it before the rest of the server is loaded. The server
 * then takes the request over (`ServerSession.adopt`): it runs it again,
 * under the session id already sent, and drops that answer.
 *
 * Anything less plain is left to the server, which answers it as it always
 * did: another method, params the schema refuses, a resume, bytes outside
 * ASCII, a `\u` escape or a `sandbox` key (the duplicate-key check's cases),
 * a line not starting with `{`, and an answer that cannot be made (a deleted
 * cwd, no home directory).
 */
import { isAscii } from 'node:buffer';
import { decodeParams } from '../protocol/decode.js';
import { Method } from '../protocol/method-names.js';
import { Methods } from '../protocol/methods.js';
import { randomUuid } from '../protocol/random-ids.js';
import { classify } from '../transport/classify.js';
import { mayCarrySandbox } from '../transport/duplicate-keys.js';
import { wireOrder } from '../transport/wire-order.js';
import type { SandboxSupport } from './environment-info.js';
import { initializeResult } from './initialize-result.js';

/** An `initialize` the CLI answered, for the server to take over. */
export interface AnsweredInitialize {
  /** The request's params as they came (the server runs the request again with them). */
  params: unknown;
  /** The session id the answer gave. */
  sessionId: string;
}

const OPEN_BRACE = 0x7b;

/**
 * The answer to `line` (one line of input, without its newline) as the line
 * to write, or undefined when the server must answer it.
 */
export function answerInitialize(
  line: Buffer,
  sandbox: () => SandboxSupport,
): { answer: string; answered: AnsweredInitialize } | undefined {
  if (line[0] !== OPEN_BRACE || !isAscii(line)) return undefined;
  const text = line.toString('latin1');
  if (mayCarrySandbox(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!classify(value).ok) return undefined;
  const request = value as { id?: unknown; method: unknown; params?: unknown };
  if (request.method !== Method.Initialize || request.id === undefined) return undefined;
  const spec = Methods[Method.Initialize];
  let params: { resumeSessionId?: string | null };
  try {
    params = decodeParams(spec.params, request.params, spec.struct);
  } catch {
    return undefined;
  }
  if (params.resumeSessionId !== undefined && params.resumeSessionId !== null) return undefined;
  const sessionId = randomUuid();
  let result: ReturnType<typeof initializeResult>;
  try {
    result = initializeResult(sessionId, sandbox());
  } catch {
    return undefined; // no cwd or home directory: the server answers with its internal error, and goes on
  }
  const answer = `${JSON.stringify(wireOrder({ id: request.id, result }))}\n`;
  return { answer, answered: { params: request.params, sessionId } };
}
