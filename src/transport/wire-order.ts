/**
 * The members of a message as this server writes them, in the reference's
 * order: a response is `id` then `result` or `error`, a request or
 * notification `id`, `method`, `params`, with no `jsonrpc` member (PROTOCOL.md
 * §0), as the reference writes them. Shared by the line writer and the CLI's first answer
 * (`server/early-initialize.ts`), so that both write the same bytes.
 */
export type Json = Record<string, unknown>;

export function wireOrder(message: Json): Json {
  if ('id' in message && ('result' in message || 'error' in message)) {
    return 'error' in message && message.error !== undefined
      ? { id: message.id, error: message.error }
      : { id: message.id, result: message.result };
  }
  if ('method' in message) {
    const out: Json = {};
    if ('id' in message) out.id = message.id;
    out.method = message.method;
    if (message.params !== undefined) out.params = message.params;
    return out;
  }
  const { jsonrpc: _ignored, ...rest } = message;
  return rest;
}
