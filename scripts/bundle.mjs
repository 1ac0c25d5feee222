#!/usr/bin/env node
// Bundles the CLI's server into dist/cli/server.cjs (run by the launcher, with V8's code cache)
// and the library into dist/index.js (after tsc), so that start-up reads a few files instead of
// a hundred modules: node-pty stays external (a native
// addon), undici and execa are split into their own chunks (loaded on first use).
// `npm run bench -- --only startup` shows what it saves.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { build } from 'esbuild';

const common = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  external: ['node-pty'],
  chunkNames: 'chunks/[name]-[hash]',
  // vscode-jsonrpc is CommonJS and requires Node's built-ins.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
};

// The server as one CommonJS file, which the launcher (scripts/launcher.cjs, installed as
// dist/cli/main.js) runs through V8's code cache.
await build({
  ...common,
  entryPoints: { server: 'src/cli/main.ts' },
  outdir: 'dist/cli',
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  splitting: false,
  define: { 'import.meta.url': '__importMetaUrl' },
  // undici and ws come from node_modules on first use (http/request, --listen ws://), so that every
  // start reads a smaller file; their import() becomes require(), which a vm.Script can run.
  external: [...common.external, 'undici', 'ws'],
  supported: { 'dynamic-import': false },
  banner: { js: "const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
});
// dist/cli holds only the launcher and the bundle, both CommonJS (tsc's ES modules of src/cli are
// in the bundle; left here, a package.json saying "commonjs" would make them unloadable).
for (const name of fs.readdirSync('dist/cli')) if (!name.startsWith('server.cjs')) fs.rmSync(`dist/cli/${name}`);
fs.writeFileSync('dist/cli/package.json', '{ "type": "commonjs" }\n');
fs.copyFileSync('scripts/launcher.cjs', 'dist/cli/main.js');
fs.chmodSync('dist/cli/main.js', 0o755);
// Make the code cache now: one handshake through the launcher writes it at exit (never keep an
// old one: V8 may accept a cache made for other code of the same length).
fs.rmSync('dist/cli/server.cjs.cache', { force: true });
// The session it runs uses the common methods, so that their code is in the cache too (V8 compiles
// a function when it first runs; the cache keeps what was compiled by the time it is made).
const warmUp = [
  { id: 1, method: 'initialize', params: { clientName: 'build' } },
  { method: 'initialized', params: {} },
  { id: 2, method: 'fs/getMetadata', params: { path: 'file:///' } },
  { id: 3, method: 'fs/readDirectory', params: { path: '/' } },
  { id: 4, method: 'process/start', params: { processId: 'p', argv: ['true'], cwd: '/', env: {}, tty: false } },
  { id: 5, method: 'process/read', params: { processId: 'p', waitMs: 2000 } },
  { id: 6, method: 'process/write', params: { processId: 'p', chunk: '' } },
];
execFileSync(process.execPath, ['dist/cli/main.js'], {
  input: warmUp.map((message) => `${JSON.stringify(message)}\n`).join(''),
  stdio: ['pipe', 'ignore', 'inherit'],
});
// The library too (dist/index.js; tsc's .d.ts files stay): execa and undici load on first use.
await build({ ...common, entryPoints: { index: 'src/index.ts' }, outdir: 'dist' });
