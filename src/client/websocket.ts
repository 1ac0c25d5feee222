/** The client's end of a WebSocket connection to an exec-server, as the streams the client reads and writes. */
import { webSocketStreams } from '../transport/websocket-streams.js';
import { ClientErrors } from './errors.js';
import type { LinkTransport } from './link.js';

/**
 * Opens `url` (with `token` as the Bearer token); rejects with a
 * `connectFailed` error naming the status or cause. Ending the output closes
 * the socket cleanly (1000: the server ends the session); `abort` drops it
 * without a close frame (the server keeps the session for a resume).
 */
export async function openWebSocket(url: string, token: string | undefined): Promise<LinkTransport> {
  // Loaded on first use: a client that never connects over WebSocket does not pay for it.
  const { WebSocket } = await import('ws');
  const socket = new WebSocket(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_request, response) => {
      socket.terminate();
      reject(ClientErrors.connectFailed(url, `HTTP ${response.statusCode}`));
    });
    socket.once('error', (error) => reject(ClientErrors.connectFailed(url, error.message)));
  });
  return { ...webSocketStreams(socket), abort: () => socket.terminate() };
}
