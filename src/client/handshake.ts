/**
 * The bounds of a handshake: `initialize` must be answered within the
 * timeout, and a spawned server that exits meanwhile is reported with its
 * exit status and the tail of its stderr rather than as a closed stream.
 */
import { ClientErrors, ExecServerClientError } from './errors.js';
import type { ServerChild } from './server-child.js';

/** How long a closed stream may wait for the server's exit status. */
const EXIT_REPORT_WAIT_MS = 2000;

export async function boundedHandshake<T>(answer: Promise<T>, timeoutMs: number, child: ServerChild | undefined): Promise<T> {
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
