/**
 * Bytes to be sent as one base64 JSON string. A handler may answer one in a
 * top-level string member of its result; the line writer encodes it straight
 * onto the stream in slices, so a response far larger than a V8 string never
 * exists as one string (see `transport/line-writer.ts`).
 */
export class Base64Payload {
  /** `onWritten`: called once the line writer has encoded the bytes (their buffer may then be reused). */
  constructor(
    readonly bytes: Buffer,
    private readonly onWritten?: () => void,
  ) {}

  /** The bytes are on their way: a pooled buffer can go back to its pool. */
  release(): void {
    this.onWritten?.();
  }

  toJSON(): string {
    return this.bytes.toString('base64');
  }
}

/** The bytes of a base64 member, whichever form it came in. */
export function bytesOf(value: string | Base64Payload): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : value.bytes;
}

/** A result as the wire had it: top-level members that arrived decoded (large answers, see `transport/large-line.ts`) back to base64. */
export function payloadsAsText(result: unknown): unknown {
  if (result === null || typeof result !== 'object') return result;
  const decoded = Object.entries(result).filter(([, value]) => value instanceof Base64Payload);
  if (decoded.length === 0) return result;
  return { ...result, ...Object.fromEntries(decoded.map(([key, value]) => [key, (value as Base64Payload).toJSON()])) };
}
