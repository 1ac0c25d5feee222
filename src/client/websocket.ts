/** The client's end of a WebSocket connection to an exec-server, as the streams the client reads and writes. */
import { PeerLiveness } from '../transport/websocket-liveness.js';
import { webSocketLimits, webSocketStreams } from '../transport/websocket-streams.js';
import { ClientErrors } from './errors.js';
import { type LinkTransport, MAX_ANSWER_BYTES } from './link.js';

/**
 * Opens `url` (with `token` as the Bearer token); rejects with a
 * `connectFailed` error naming the status or cause. Ending the output closes
 * the socket cleanly (1000: the server ends the session); `abort` drops it
 * without a close frame (the server keeps the session for a resume).
 */
export async function openWebSocket(url: string, token: string | undefined, handshakeTimeoutMs?: number): Promise<LinkTransport> {
  // Loaded on first use: a client that never connects over WebSocket does not pay for it.
  const { WebSocket } = await import('ws');
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  let socket: InstanceType<typeof WebSocket>;
  try {
    socket = new WebSocket(url, {
      headers,
      ...webSocketLimits(MAX_ANSWER_BYTES),
      ...(handshakeTimeoutMs ? { handshakeTimeout: handshakeTimeoutMs } : {}),
    });
  } catch (error) {
    throw ClientErrors.connectFailed(url, (error as Error).message); // not a ws:// or wss:// URL
  }
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_request, response) => {
      socket.terminate();
      reject(ClientErrors.connectFailed(url, `HTTP ${response.statusCode}`));
    });
    socket.once('error', (error) => reject(ClientErrors.connectFailed(url, error.message)));
  });
  const streams = webSocketStreams(socket);
  keepAlive(socket, streams.sentBytes);
  return {
    ...streams,
    abort: () => socket.terminate(),
    writable: () => socket.readyState === socket.OPEN,
    endsWithInput: true,
  };
}

/** How often the client pings; a server that misses a pong is taken for gone (the link drops). */
const PING_INTERVAL_MS = 15_000;

/** Pings the server, so that a connection that died silently is noticed (and, with `reconnect`, replaced). */
function keepAlive(socket: import('ws').WebSocket, sentBytes: () => number): void {
  const liveness = new PeerLiveness(socket, sentBytes);
  const timer = setInterval(() => liveness.check() || socket.terminate(), PING_INTERVAL_MS).unref();
  socket.once('close', () => clearInterval(timer));
}
