/** A test's HTTP server on 127.0.0.1 (a free port), and its shutdown. */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts listening; resolves with the base URL, `http://127.0.0.1:<port>`. */
export async function listenLoopback(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Drops open connections (streamed bodies included) and stops listening. */
export async function closeLoopback(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
