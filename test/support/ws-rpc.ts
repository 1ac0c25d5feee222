/**
 * A bare JSON-RPC peer over a WebSocket, for tests that need the wire itself
 * (what a resume answers, what happens when a socket is cut): requests by id,
 * notifications collected, and `cut()` to drop the TCP connection without a
 * close frame, as a network failure would.
 */
import { WebSocket } from 'ws';

export interface RpcAnswer {
  id: number;
  result?: any;
  error?: { code: number; message: string };
}

export class WsRpc {
  readonly notifications: Array<{ method: string; params: any }> = [];
  /** Every message received, answers and notifications, in order. */
  readonly received: Array<{ id?: number; method?: string }> = [];
  private nextId = 0;
  private readonly pending = new Map<number, (answer: RpcAnswer) => void>();
  readonly closed: Promise<number>;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString());
      this.received.push(message);
      if (message.id !== undefined && this.pending.has(message.id)) {
        this.pending.get(message.id)!(message);
        this.pending.delete(message.id);
      } else if (message.method) this.notifications.push(message);
    });
    this.closed = new Promise((resolve) => socket.once('close', (code) => resolve(code)));
  }

  static open(url: string, token?: string): Promise<WsRpc> {
    const socket = new WebSocket(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new WsRpc(socket)));
      socket.once('error', reject);
    });
  }

  request(method: string, params: unknown): Promise<RpcAnswer> {
    const id = ++this.nextId;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  notify(method: string, params: unknown): void {
    this.socket.send(JSON.stringify({ method, params }));
  }

  /** `initialize` (resuming `resumeSessionId` if given) and, when it succeeds, `initialized`. */
  async initialize(resumeSessionId: string | null = null): Promise<RpcAnswer> {
    const answer = await this.request('initialize', { clientName: 'ws-rpc', resumeSessionId });
    if (answer.result) this.notify('initialized', {});
    return answer;
  }

  /** Sends a binary frame (which the server refuses with 1003). */
  sendBinary(): void {
    this.socket.send(Buffer.from([1, 2, 3]), { binary: true });
  }

  /** Sends a text frame holding exactly `bytes` (invalid UTF-8 included: the server's ws refuses it with 1007). */
  sendText(bytes: Buffer): void {
    this.socket.send(bytes, { binary: false });
  }

  /** Stops reading what the server sends: its answers back up into TCP and the server's flow control. */
  pauseReading(): void {
    this.socket.pause();
  }

  /** Bytes sent but not yet taken by the socket (they wait while the server does not read). */
  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  /** Drops the connection without a close frame (the server sees 1006, as after a network failure). */
  cut(): Promise<number> {
    this.socket.terminate();
    return this.closed;
  }

  /** A clean close (1000, the client is done), or another close code. */
  close(code = 1000): Promise<number> {
    this.socket.close(code);
    return this.closed;
  }
}
