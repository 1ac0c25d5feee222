/**
 * Our WebSocket listener behind a TCP proxy that a test cuts: what the
 * client's `reconnect` tests drive.
 */
import { type TcpProxy, tcpProxy } from '../../scripts/interop/tcp-proxy.mjs';
import { CLI } from './server-process.js';
import { startWebSocketListener, type WebSocketListener } from './websocket-server.js';

export interface ReconnectRig {
  listener: WebSocketListener;
  proxy: TcpProxy;
  /** Cuts the connection and keeps the network down until the server has detached the session. */
  goDown(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

export async function reconnectRig(): Promise<ReconnectRig> {
  const listener = await startWebSocketListener(process.execPath, [CLI, '--listen', 'ws://127.0.0.1:0', '--log-level', 'info']);
  const proxy = await tcpProxy(listener.url);
  const detachCount = (sessionId: string) => listener.printed().split(`session ${sessionId.slice(0, 8)}… detached`).length - 1;
  return {
    listener,
    proxy,
    async goDown(sessionId) {
      const detachedBefore = detachCount(sessionId);
      proxy.block();
      proxy.cut();
      await listener.output(new RegExp(`(session ${sessionId.slice(0, 8)}… detached[^]*){${detachedBefore + 1}}`));
    },
    async close() {
      await proxy.close();
      await listener.stop();
    },
  };
}
