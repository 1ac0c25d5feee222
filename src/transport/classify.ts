/**
 * Sorts one parsed JSON line into request / notification / response, or
 * explains why it is not a JSON-RPC message (EXT-PARSE). vscode-jsonrpc
 * silently drops what it cannot classify, so this check is ours.
 */
import type { Message } from 'vscode-jsonrpc';
import { Errors, type ProtocolError } from '../protocol/errors.js';

export type Classified = { ok: true; message: Message } | { ok: false; error: ProtocolError };

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

function isValidId(id: unknown): id is string | number {
  if (typeof id === 'string') return true;
  if (Number.isSafeInteger(id)) return true;
  if (typeof id !== 'number' || !Number.isInteger(id)) return false;
  const big = BigInt(id);
  return big >= I64_MIN && big <= I64_MAX;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function classify(value: unknown): Classified {
  if (Array.isArray(value)) return { ok: false, error: Errors.batchNotSupported() };
  if (!isPlainObject(value)) return { ok: false, error: Errors.invalidMessage('expected a JSON object') };
  const hasId = 'id' in value;
  if (typeof value.method === 'string') {
    if ('trace' in value && value.trace !== null && !isPlainObject(value.trace)) {
      return { ok: false, error: Errors.invalidMessage('"trace" must be null or an object') };
    }
    if (hasId && !isValidId(value.id)) {
      return { ok: false, error: Errors.invalidMessage('"id" must be a string or a 64-bit integer') };
    }
    return { ok: true, message: value as unknown as Message };
  }
  if ('method' in value) return { ok: false, error: Errors.invalidMessage('"method" must be a string') };
  if (hasId && ('result' in value || 'error' in value)) return { ok: true, message: value as unknown as Message };
  return { ok: false, error: Errors.invalidMessage('missing "method"') };
}
