/** `process/start` on the client side: the session is registered before the request, since notifications may precede the answer. */
import { randomUuid } from '../protocol/random-ids.js';
import { Errors } from '../protocol/errors.js';
import type { ParamsOf } from '../protocol/methods.js';
import { ClientErrors } from './errors.js';
import { START_EXTRAS, type StartOptions } from './options.js';
import { ProcessSession, type SessionBackend } from './process-session.js';
import type { ServerGeneration } from './server-generation.js';

export interface StartContext {
  sessions: Map<string, ProcessSession>;
  backend: SessionBackend;
  generation: ServerGeneration;
  send: (params: ParamsOf<'process/start'>) => Promise<unknown>;
}

export async function startProcess({ sessions, backend, generation, send }: StartContext, options: StartOptions): Promise<ProcessSession> {
  const processId = options.processId ?? randomUuid();
  if (sessions.has(processId)) throw ClientErrors.fromServer(Errors.processExists(processId));
  if (options.sandbox != null)
    generation.requireGeneration2('sandbox', 'protocol generation 1 has no sandbox policies; connect with protocolGeneration 2');
  const session = new ProcessSession(processId, options.tty ?? false, backend, options.bufferEvents ?? true);
  const forget = () => {
    if (sessions.get(processId) === session) sessions.delete(processId);
  };
  sessions.set(processId, session);
  session.onFinished = forget;
  try {
    await send({
      processId,
      argv: options.argv,
      cwd: generation.cwd(options.cwd ?? process.cwd()),
      env: options.env ?? (process.env.PATH ? { PATH: process.env.PATH } : {}),
      tty: options.tty ?? false,
      pipeStdin: options.pipeStdin ?? false,
      arg0: options.arg0 ?? null,
      ...(options.size ? { size: options.size } : {}),
      // null is absent: a `sandbox` member, even null, tells a server the client speaks generation 2.
      ...Object.fromEntries(START_EXTRAS.filter((name) => options[name] != null).map((name) => [name, options[name]])),
    });
  } catch (error) {
    forget();
    throw error;
  }
  session.started = true;
  return session;
}
