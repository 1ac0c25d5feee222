/**
 * A TCP proxy on 127.0.0.1 in front of a WebSocket listener, whose connections
 * a test or an interop scenario can cut at once, as a network failure would: both sides see the
 * connection drop, without a WebSocket close frame.
 */
import net from 'node:net';

/** Listens on a free loopback port and forwards to `targetUrl`'s host and port (types: tcp-proxy.d.mts). */
export async function tcpProxy(targetUrl) {
  const target = new URL(targetUrl);
  const open = new Set();
  /** Each open connection's client side and its upstream, for `holdBack`. */
  const pairs = new Set();
  let connections = 0;
  let blocked = false;
  let stalled = false;
  const server = net.createServer((client) => {
    if (blocked) return void client.destroy();
    if (stalled) {
      // Accepted, never answered: a wedged server or load balancer.
      open.add(client);
      client.on('close', () => open.delete(client));
      client.on('error', () => undefined);
      return;
    }
    connections++;
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    const pair = { client, upstream };
    pairs.add(pair);
    client.on('close', () => pairs.delete(pair));
    client.pipe(upstream).on('close', () => client.destroy());
    upstream.pipe(client).on('close', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `ws://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    cut: () => {
      for (const socket of open) socket.destroy();
    },
    holdBack: () => {
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        client.pause();
      }
    },
    block: () => {
      blocked = true;
    },
    unblock: () => {
      blocked = false;
      stalled = false;
    },
    stall: () => {
      stalled = true;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
