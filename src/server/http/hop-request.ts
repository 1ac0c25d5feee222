/**
 * Sending one hop through undici's dispatcher, as the references' HTTP
 * client sends it: the request target keeps an empty query (`/a?`), which
 * Node's URL drops from `search`; and the request fails when its signal
 * aborts, even while undici is still connecting (it let a silent TLS
 * handshake run to its own 10 s connect timeout past `timeoutMs`).
 */
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

/** What a hop is dispatched with: its origin's, or a proxy's (proxy-routes.ts). */
export interface Route {
  dispatcher: Dispatcher;
  origin: string;
  path: string;
  headers: string[] | Record<string, string[]>;
}

/** The path and query to send for `url`. */
export function requestPath(url: URL): string {
  if (url.search !== '') return `${url.pathname}${url.search}`;
  // Neither userinfo nor path holds a raw `?` or `#` in a serialized URL.
  const query = url.href.indexOf('?');
  const hash = url.href.indexOf('#');
  return query !== -1 && (hash === -1 || query < hash) ? `${url.pathname}?` : url.pathname;
}

type HopBody = Buffer | Readable | undefined;

/**
 * A caller's `transfer-encoding: chunked`, which undici refuses as a header:
 * the header goes and the body goes as a stream, which undici sends chunked,
 * as the references send it. Any other transfer coding stays (and fails).
 */
function chunkedOnRequest(headers: string[], body: Buffer | undefined): { headers: string[]; body: HopBody } {
  for (let at = 0; at < headers.length; at += 2) {
    if (headers[at]!.toLowerCase() !== 'transfer-encoding' || headers[at + 1]!.trim().toLowerCase() !== 'chunked') continue;
    const rest = [...headers.slice(0, at), ...headers.slice(at + 2)];
    return { headers: rest, body: Readable.from(body !== undefined && body.length > 0 ? [body] : []) };
  }
  return { headers, body };
}

/** One request of `hop`'s method, headers and body to `url`, failed at once when `signal` aborts. */
export function sendHop(
  routeFor: (url: URL, headers: string[]) => Route,
  url: URL,
  options: { method: string; headers: string[]; body: Buffer | undefined },
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  const { headers, body } = chunkedOnRequest(options.headers, options.body);
  const method = options.method as Dispatcher.HttpMethod;
  const route = routeFor(url, headers);
  const sent = route.dispatcher.request({ origin: route.origin, path: route.path, method, headers: route.headers, body, signal });
  if (signal.aborted) return sent;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    sent.then(
      (response) => {
        signal.removeEventListener('abort', onAbort);
        // Answered as the abort came: nobody will read this body.
        if (signal.aborted) response.body.on('error', () => undefined).destroy();
        resolve(response);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
