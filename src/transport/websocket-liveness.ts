/**
 * Whether a WebSocket peer is still there. A ping's pong is the usual sign,
 * but it queues behind whatever was sent before it: a peer slow to read what
 * we sent, or one we stopped reading (backpressure), cannot answer in time
 * and is not gone. Other signs count too: a message or a ping from the peer, or our
 * output leaving for it (the socket only takes more once the peer takes it).
 */
import type { WebSocket } from 'ws';

/** Whether flow control may hold a pong up: our output waits on the peer, or we stopped reading it. */
const heldByFlow = (socket: WebSocket): boolean => socket.bufferedAmount > 0 || socket.isPaused;

export class PeerLiveness {
  private heard = true;
  private sentAtLastCheck = 0;

  /** `sentBytes`: how much of our output the socket has taken so far (`WebSocketStreams.sentBytes`). */
  constructor(
    private readonly socket: WebSocket,
    private readonly sentBytes: () => number,
  ) {
    // A peer's own pings count too: a client behind on our output (its pong queued behind it) still pings.
    for (const sign of ['pong', 'ping', 'message'] as const) socket.on(sign, () => (this.heard = true));
  }

  /**
   * Once per interval: false if the peer missed the last ping and gave no
   * other sign since; otherwise it is pinged again (also when held by flow
   * control: a ping written into a dead connection fails, and closes it).
   */
  check(): boolean {
    const sent = this.sentBytes();
    const progressed = sent !== this.sentAtLastCheck;
    this.sentAtLastCheck = sent;
    if (!this.heard && !progressed && !heldByFlow(this.socket)) return false;
    this.ping();
    return true;
  }

  /**
   * Pings now, and calls `onSilent` if no sign comes within `ms` (another
   * connection wants this one's session): no pong, message or ping, and none
   * of our output taken meanwhile. Unlike `check`, flow control is no excuse:
   * the one asking is most likely the same client, back after its network
   * dropped, and this connection's output would hold up to TCP's give-up.
   */
  probe(ms: number, onSilent: () => void): void {
    const sentBefore = this.sentBytes();
    this.ping();
    setTimeout(() => this.heard || this.sentBytes() !== sentBefore || onSilent(), ms).unref();
  }

  private ping(): void {
    this.heard = false;
    this.socket.ping();
  }
}
