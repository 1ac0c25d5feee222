/**
 * `exec-server --listen ws://IP:PORT`: one server per WebSocket connection,
 * all sharing the process runtime. Secure by default: without a token only a
 * loopback address may be used; with `--ws-auth capability-token` every
 * upgrade needs `Authorization: Bearer <token>` (compared in constant time,
 * never logged); an `Origin` header is refused (403) unless allowed with
 * `--ws-allow-origin`, so a web page cannot drive the server. Sessions are at
 * `/`; `/readyz` answers 200 without a token, for readiness probes. Peers are
 * pinged; one that stops answering is dropped. A dropped connection's session
 * waits `detachedTtlMs` for a client to resume it (`initialize` with
 * `resumeSessionId`); a clean close (1000) ends it at once.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import type stream from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { ExecServer, type ExecServerOptions } from '../server/exec-server.js';
import type { Logger } from '../server/logger.js';
import type { ProcessRuntime } from '../server/process/runtime.js';
import { SessionRegistry } from '../server/session-registry.js';
import { PeerLiveness } from '../transport/websocket-liveness.js';
import { webSocketLimits, webSocketStreams } from '../transport/websocket-streams.js';

export interface WebSocketListenOptions {
  host: string;
  port: number;
  /** SHA-256 of the accepted token; undefined: no authentication (loopback only). */
  tokenSha256: Buffer | undefined;
  allowedOrigins: string[];
  /** Frames above this are refused (close 1009). */
  maxFrameBytes: number;
  /** How often idle peers are pinged (default 30 s). */
  pingIntervalMs?: number;
  /** How long a dropped connection's session can be resumed. */
  detachedTtlMs: number;
  /** Connections served at once; more are refused (503) (default 256). */
  maxConnections?: number;
  server: Omit<ExecServerOptions, 'input' | 'output' | 'runtime' | 'logger' | 'sessions'>;
  runtime: ProcessRuntime;
  logger: Logger;
}

const PING_INTERVAL_MS = 30_000;
/** Each connection is a session, its processes and a descriptor: a peer opening thousands must not take them all. */
const MAX_CONNECTIONS = 256;
/** How long a connection whose session another client wants back has to answer a ping. */
const CONTESTED_PONG_MS = 2000;
/**
 * Close codes after which the session ends at once rather than waiting for a
 * resume: the client said it is done (1000), or the connection was closed
 * for breaking the protocol (1002, and as ws names it: 1003 binary frame,
 * 1007 invalid UTF-8, 1008 too many fragments, 1009 frame too large). Any
 * other end (1006 without a close frame; 1001 or 1005 from a proxy going
 * away) may be followed by a resume.
 */
const ENDS_SESSION = new Set([1000, 1002, 1003, 1007, 1008, 1009]);
/** How long peers get to answer the close the server sends as it shuts down (1001) before their sockets are cut. */
const SHUTDOWN_CLOSE_MS = 1000;

function authorized(header: string | undefined, tokenSha256: Buffer): boolean {
  // The scheme's name is case-insensitive (RFC 7235), as the reference takes it.
  const token = /^Bearer +(.+)$/i.exec(header ?? '')?.[1];
  if (token === undefined) return false;
  return timingSafeEqual(createHash('sha256').update(token).digest(), tokenSha256);
}

/** A request's path, without its query (also from an absolute-form target, `GET http://host/path`). */
const pathOf = (url = '/') => (url.startsWith('/') ? url : URL.canParse(url) ? new URL(url).pathname : url).replace(/\?.*/s, '');

/**
 * As Codex's listener: `/readyz` answers 200 to anyone (a readiness probe
 * learns nothing else), sessions live at `/` only, any other path is 404.
 * Undefined: the path of a session.
 */
function statusOf(path: string): number | undefined {
  if (path === '/readyz') return 200;
  return path === '/' ? undefined : 404;
}

function refuse(socket: net.Socket, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** Listens; resolves with the bound URL (port 0 picks a free port). */
export async function listenWebSocket(options: WebSocketListenOptions): Promise<{ url: string; close(): Promise<void> }> {
  const wss = new WebSocketServer({ noServer: true, ...webSocketLimits(options.maxFrameBytes) });
  const connections = new Map<WebSocket, ExecServer>();
  const upgraded = new Set<stream.Duplex>();
  // A ping every interval; a peer that gave no sign of life since the last one is gone (its session detaches).
  const liveness = new WeakMap<WebSocket, PeerLiveness>();
  /** Pings the connection holding `sessionId` now, and drops it if it does not answer in time. */
  const checkHolder = (sessionId: string) => {
    for (const [ws, server] of connections) {
      if (server.sessionId === sessionId) liveness.get(ws)?.probe(CONTESTED_PONG_MS, () => ws.terminate());
    }
  };
  const sessions = new SessionRegistry({
    detachedTtlMs: options.detachedTtlMs,
    processes: { ...options.server, runtime: options.runtime },
    logger: options.logger,
    onContested: checkHolder,
  });
  const heartbeat = setInterval(() => {
    for (const client of wss.clients) if (liveness.get(client)?.check() === false) client.terminate();
  }, options.pingIntervalMs ?? PING_INTERVAL_MS);
  heartbeat.unref();
  const httpServer = http.createServer((request, response) => {
    const status = statusOf(pathOf(request.url)) ?? 426;
    response.writeHead(status, { Connection: 'close', 'Content-Length': 0 }).end();
  });
  httpServer.on('upgrade', (request, socket, head) => {
    const status = statusOf(pathOf(request.url));
    if (status !== undefined) return refuse(socket as net.Socket, status, http.STATUS_CODES[status] ?? '');
    const origin = request.headers.origin;
    const from = request.socket.remoteAddress ?? 'unknown';
    // Refusals are logged (never the token): someone is knocking with the wrong key, or from a page.
    if (options.tokenSha256 && !authorized(request.headers.authorization, options.tokenSha256)) {
      options.logger.warn(`refused a connection from ${from}: ${request.headers.authorization ? 'wrong token' : 'no token'}`);
      return refuse(socket as net.Socket, 401, 'Unauthorized');
    }
    if (origin !== undefined && !options.allowedOrigins.includes(origin)) {
      options.logger.warn(`refused a connection from ${from}: Origin ${JSON.stringify(origin)} is not allowed`);
      return refuse(socket as net.Socket, 403, 'Forbidden');
    }
    // Counted by socket, from the upgrade on: a handshake ws refuses never reaches the callback below.
    const maxConnections = options.maxConnections ?? MAX_CONNECTIONS;
    if (upgraded.size >= maxConnections) {
      options.logger.warn(`refused a connection from ${from}: ${maxConnections} connections are open`);
      return refuse(socket as net.Socket, 503, 'Service Unavailable');
    }
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    wss.handleUpgrade(request, socket, head, (ws) => {
      const { input, output, sentBytes } = webSocketStreams(ws, {
        onClose: (code) => server.transportClosed(ENDS_SESSION.has(code) ? 'end' : 'detach'),
      });
      liveness.set(ws, new PeerLiveness(ws, sentBytes));
      const server = new ExecServer({
        ...options.server,
        input,
        output,
        blankLinesAreMessages: true,
        runtime: options.runtime,
        logger: options.logger,
        sessions,
      }).listen();
      connections.set(ws, server);
      ws.once('close', () => connections.delete(ws));
      void server.done.then(() => ws.close(1000));
      options.logger.info(`connection from ${from}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, resolve);
  });
  const address = httpServer.address() as net.AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `ws://${host}:${address.port}`,
    close: async () => {
      clearInterval(heartbeat);
      // Going away (1001), said to each peer; a peer that does not answer in time is cut off.
      for (const client of wss.clients) client.close(1001, 'exec-server is shutting down');
      const cut = setTimeout(() => {
        for (const client of wss.clients) client.terminate();
      }, SHUTDOWN_CLOSE_MS);
      const closed = new Promise((resolve) => httpServer.close(resolve));
      httpServer.closeAllConnections(); // plain HTTP requests still open (a half-sent one would hold the close)
      await Promise.all([closed, sessions.closeAll()]);
      clearTimeout(cut);
    },
  };
}
