/**
 * A TCP proxy on 127.0.0.1 in front of a listener, whose connections a test
 * can cut at once, as a network failure would: both sides see the
 * connection drop, without a WebSocket close frame.
 */
import net from 'node:net';

export interface TcpProxy {
  /** `ws://127.0.0.1:PORT` of the proxy, for a target `ws://…` URL. */
  url: string;
  /** How many connections the proxy has accepted. */
  readonly connections: number;
  /** Drops every open connection. */
  cut(): void;
  /** While blocked, new connections are dropped at once (the network is still down). */
  block(): void;
  unblock(): void;
  close(): Promise<void>;
}

export async function tcpProxy(targetUrl: string): Promise<TcpProxy> {
  const target = new URL(targetUrl);
  const open = new Set<net.Socket>();
  let connections = 0;
  let blocked = false;
  const server = net.createServer((client) => {
    if (blocked) return void client.destroy();
    connections++;
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).on('close', () => client.destroy());
    upstream.pipe(client).on('close', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    cut: () => {
      for (const socket of open) socket.destroy();
    },
    block: () => {
      blocked = true;
    },
    unblock: () => {
      blocked = false;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
