export interface TcpProxy {
  /** `ws://127.0.0.1:PORT` of the proxy, for a target `ws://…` URL. */
  url: string;
  /** How many connections the proxy has accepted. */
  readonly connections: number;
  /** Drops every open connection. */
  cut(): void;
  /** Stops passing on what the clients of open connections send: it is lost at the next `cut`. */
  holdBack(): void;
  /** While blocked, new connections are dropped at once (the network is still down). */
  block(): void;
  /** While stalled, new connections are accepted and never answered (until `unblock`). */
  stall(): void;
  /** Lets new connections through again (after `block` or `stall`). */
  unblock(): void;
  close(): Promise<void>;
}

export function tcpProxy(targetUrl: string): Promise<TcpProxy>;
