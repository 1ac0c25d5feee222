/**
 * The bounds of a handshake: `initialize` must be answered within the
 * timeout, and a spawned server that exits meanwhile is reported with its
 * exit status and the tail of its stderr rather than as a closed stream.
 */
import type { ProducedResultOf } from '../protocol/methods.js';
import { ClientErrors, ExecServerClientError } from './errors.js';
import type { ServerChild } from './server-child.js';

/** The two steps of a handshake, as the client sends them, and their bounds. */
export interface HandshakeSteps {
  /** The `initialize` request, already sent. */
  initialize: Promise<ProducedResultOf<'initialize'>>;
  /** Sends the `initialized` notification. */
  notifyInitialized: () => Promise<void>;
  timeoutMs: number;
  child: ServerChild | undefined;
  /** Called with an answer that carries no `sessionId`: the server broke the protocol. */
  onMalformed: (error: ExecServerClientError) => void;
}

/**
 * Awaits the answer to `initialize`, checks it names a session, then sends
 * `initialized`: each step within the timeout.
 */
export async function completeHandshake(steps: HandshakeSteps): Promise<ProducedResultOf<'initialize'>> {
  const { timeoutMs, child } = steps;
  const result = await boundedHandshake(steps.initialize, timeoutMs, child);
  if (typeof (result as unknown as { sessionId?: unknown } | null)?.sessionId !== 'string') {
    const error = ClientErrors.malformedAnswer('initialize', result);
    steps.onMalformed(error);
    throw error;
  }
  // A server gone right after its answer fails here: reported as the answer's failure would be.
  const notified = Promise.resolve()
    .then(steps.notifyInitialized)
    .catch((error: unknown) => {
      throw ClientErrors.disconnected((error as Error).message);
    });
  await boundedHandshake(notified, timeoutMs, child);
  return result;
}

/** How long a closed stream may wait for the server's exit status. */
const EXIT_REPORT_WAIT_MS = 2000;

async function boundedHandshake<T>(answer: Promise<T>, timeoutMs: number, child: ServerChild | undefined): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(ClientErrors.handshakeTimeout(timeoutMs)), timeoutMs);
  });
  const exited = child
    ? child.exited.then((status) => Promise.reject(ClientErrors.serverExited(status, child.stderr)))
    : new Promise<never>(() => undefined);
  try {
    return await Promise.race([answer, timeout, exited]);
  } catch (error) {
    // A server that dies mid-handshake first shows up as a closed stream: report its exit instead.
    if (child && error instanceof ExecServerClientError && error.kind === 'disconnected') {
      const status = await Promise.race([child.exited, delay(EXIT_REPORT_WAIT_MS)]);
      if (typeof status === 'string') throw ClientErrors.serverExited(status, child.stderr);
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
