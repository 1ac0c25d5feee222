/**
 * The origin the http/request tests talk to: a loopback HTTP server with one
 * behaviour per path (slow heads, endless and broken bodies, redirects, gzip),
 * which records every request it has read whole.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { closeLoopback, listenLoopback } from './loopback.js';

/** A request as the origin read it. */
export interface SeenRequest {
  method: string;
  url: string;
  rawHeaders: string[];
  body: string;
}

export interface TestOrigin {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Every request read whole, in order. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

export async function startTestOrigin(): Promise<TestOrigin> {
  const seen: SeenRequest[] = [];
  const web = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString() });
      route(req, res);
    });
  });
  const base = await listenLoopback(web);
  return { base, seen, close: () => closeLoopback(web) };
}

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  switch (req.url) {
    case '/hello':
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.setHeader('X-Custom', 'v');
      return void res.end('hello');
    case '/missing':
      res.statusCode = 404;
      return void res.end('nope');
    case '/redirect':
      res.writeHead(302, { location: '/hello' });
      return void res.end();
    case '/gzip':
      res.writeHead(200, { 'content-encoding': 'gzip' });
      return void res.end(zlib.gzipSync('compressed'));
    case '/chunked': {
      let n = 0;
      const timer = setInterval(() => {
        res.write(`part${++n};`);
        if (n === 3) {
          clearInterval(timer);
          res.end();
        }
      }, 20);
      return;
    }
    case '/slow-head':
      return void setTimeout(() => res.end('late'), 2000);
    case '/late':
      return void setTimeout(() => res.end('late'), 800);
    case '/hang':
      return; // never answers
    case '/endless': {
      const timer = setInterval(() => res.write('more;'), 20);
      return void res.on('close', () => clearInterval(timer));
    }
    case '/slow-body':
      res.write('start;');
      return void setTimeout(() => res.end('end'), 2000);
    case '/stalled-body':
      return void res.write('start;'); // the rest never comes
    case '/abort':
      res.write('partial;');
      return void setTimeout(() => res.socket?.destroy(), 50);
    case '/empty':
      res.statusCode = 204;
      return void res.end();
    case '/big':
      return void res.end(Buffer.alloc(3 * 1024 * 1024, 120));
    default:
      res.end(`echo:${req.method}`);
  }
}

/** `http/request` params: a GET with requestId `r`, and `params` over them. */
export const req = (params: Record<string, unknown>) => ({ method: 'GET', requestId: 'r', ...params });

/** A base64 body as text. */
export const text = (b64: string) => Buffer.from(b64, 'base64').toString();
