#!/usr/bin/env node
// Bundles the CLI into dist/cli/front.cjs (run by dist/cli/main.js, with V8's code cache), which
// loads the server from dist/cli/server.cjs once it has read the first line, and the library into
// dist/lib.cjs behind dist/index.js (after tsc), so that start-up reads a few files instead of a
// hundred modules: node-pty stays external (a native addon); what a session may never use runs (or
// is required) on first use. `npm run bench -- --only startup` shows what it saves.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { build } from 'esbuild';
import { facades } from './bundle-facades.mjs';

/** Builtins a session may never need: required on first use (see bundle-facades.mjs). */
const LAZY = ['node:child_process', 'node:fs/promises', 'node:tty', 'node:crypto', 'crypto', 'node:net', 'net'];
const EAGER = [
  ...['fs', 'path', 'os', 'stream', 'url', 'buffer', 'util', 'events', 'module', 'http'].map((name) => `node:${name}`),
  'vscode-jsonrpc',
  'vscode-jsonrpc/node',
];

/**
 * One CommonJS file per entry, run through V8's code cache (scripts/cached-load.cjs). undici and ws
 * come from node_modules on first use (http/request, WebSocket), so that every start reads a
 * smaller file; every import() becomes require(), which a vm.Script can run.
 */
async function bundleOf(name, entry, outdir, plugins = []) {
  await build({
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: true,
    logLevel: 'warning',
    entryPoints: { [name]: entry },
    outdir,
    outExtension: { '.js': '.cjs' },
    external: ['node-pty', 'undici', 'ws'],
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__importMetaUrl' },
    banner: { js: "const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [...plugins, facades({ eager: EAGER, lazy: LAZY })],
  });
  readyToLoad(`${outdir}/${name}.cjs`);
}

/**
 * Two edits that keep every line and column (the source map still fits):
 * - an entry's `#!` line, kept by esbuild, becomes a comment, so that loading the bundle does not
 *   copy it to drop that line;
 * - esbuild escapes non-ASCII characters in code (charset 'ascii', its default) but copies
 *   comments as they are, and one `§` there made Node read the whole bundle into a two-byte
 *   string, twice its size in memory: each such UTF-16 unit becomes `?` (and cached-load.cjs, which
 *   reads a bundle as latin1, relies on it being ASCII). (Dropping comments with
 *   minifyWhitespace did that too, but slowed fs/readBlock by about 15%:
 *   `npm run bench -- --only blocks`.)
 */
function readyToLoad(file) {
  const text = fs.readFileSync(file, 'utf8');
  const ready = (text.startsWith('#!') ? `//${text.slice(2)}` : text).replace(/[\u0080-\uffff]/g, '?');
  if (ready !== text) fs.writeFileSync(file, ready);
}

/**
 * An esbuild plugin: `specifier` (imported by an entry) becomes a bundle of its own, `file` beside
 * the entry's, run through its own code cache when first imported. `cachedLoad` is where
 * dist/cached-load.cjs is from the entry's bundle.
 */
function ofItsOwn(specifier, file, cachedLoad) {
  const namespace = `${file}-of-its-own`;
  return {
    name: namespace,
    setup(esbuild) {
      esbuild.onResolve({ filter: new RegExp(`^${specifier.replace(/[.]/g, '\\.')}$`) }, () => ({ path: specifier, namespace }));
      esbuild.onResolve({ filter: /[.]cjs$/, namespace }, (args) => ({ path: args.path, external: true }));
      esbuild.onLoad({ filter: /.*/, namespace }, () => ({
        contents: `module.exports = require('${cachedLoad}').loadCached(require('node:path').join(__dirname, '${file}'));`,
        loader: 'js',
      }));
    },
  };
}

/**
 * The library's `import('execa')` loads dist/execa.cjs, a bundle of its own with its own code
 * cache: inside the library's bundle, execa's code was compiled when the client first spawned a
 * server, and warming it into the library's cache slowed every import instead.
 */
const execaOfItsOwn = ofItsOwn('execa', 'execa.cjs', './cached-load.cjs');

/**
 * The CLI's first part (src/cli/main.ts, which may answer `initialize` before the rest is loaded)
 * loads the server (src/cli/serve.ts) from dist/cli/server.cjs only then.
 */
const serverOfItsOwn = ofItsOwn('./serve.js', 'server.cjs', '../cached-load.cjs');

// The CLI (scripts/cli-main.cjs, installed as dist/cli/main.js) runs front.cjs, which loads server.cjs.
await bundleOf('front', 'src/cli/main.ts', 'dist/cli', [serverOfItsOwn]);
await bundleOf('server', 'src/cli/serve.ts', 'dist/cli');
for (const file of ['front.cjs', 'server.cjs']) fs.chmodSync(`dist/cli/${file}`, 0o644); // run by dist/cli/main.js, not on their own
// dist/cli holds only the CLI's entry and its two bundles, all CommonJS (tsc's ES modules of src/cli
// are in the bundles; left here, a package.json saying "commonjs" would make them unloadable).
for (const name of fs.readdirSync('dist/cli')) if (!/^(front|server)[.]cjs/.test(name)) fs.rmSync(`dist/cli/${name}`);
fs.writeFileSync('dist/cli/package.json', '{ "type": "commonjs" }\n');
fs.copyFileSync('scripts/cached-load.cjs', 'dist/cached-load.cjs');
fs.copyFileSync('scripts/cli-main.cjs', 'dist/cli/main.js');
fs.chmodSync('dist/cli/main.js', 0o755);
// Make the code cache now: one session through the CLI writes it at exit (never keep an
// old one: V8 may accept a cache made for other code of the same length).
for (const file of ['front.cjs', 'server.cjs']) fs.rmSync(`dist/cli/${file}.cache`, { force: true });
// The session it runs initializes and starts one `true`: V8 keeps in the cache what was compiled
// by then, so a fresh server's first command finds its schemas' code compiled (the first command
// in `npm run bench -- --only startup`). A cache made after a longer session (more processes, fs
// calls) was larger and slower to load, with no gain on the first requests (rtt-cold, spawn).
const warmUp = [
  { id: 1, method: 'initialize', params: { clientName: 'build' } },
  { method: 'initialized', params: {} },
  { id: 2, method: 'process/start', params: { processId: 'warm', argv: ['true'], cwd: '/', env: {}, tty: false } },
];
execFileSync(process.execPath, ['dist/cli/main.js'], {
  input: warmUp.map((message) => `${JSON.stringify(message)}\n`).join(''),
  stdio: ['pipe', 'ignore', 'inherit'],
});
// execa as one CommonJS file (from node_modules it would load a hundred ES modules when the client
// first spawns a server), its code cache made by one spawn: what a client's first spawn runs.
await bundleOf('execa', 'execa', 'dist');
fs.rmSync('dist/execa.cjs.cache', { force: true });
execFileSync(process.execPath, [
  '-e',
  "require('./dist/cached-load.cjs').loadCached(require('path').resolve('dist/execa.cjs')).execa('true', { reject: false })",
]);
// The library the same way: one CommonJS file (dist/lib.cjs, with its code cache) behind an ES
// module entry, dist/index.js, that loads it on first use (tsc's .d.ts files stay). undici and ws
// are required from node_modules on first use, execa from dist/execa.cjs.
await bundleOf('lib', 'src/index.ts', 'dist', [execaOfItsOwn]);
fs.rmSync('dist/lib.cjs.cache', { force: true });
// Loading it once in a fresh process writes dist/index.js, the ES module entry that loads the bundle on
// first use (scripts/lazy-entry.mjs), and the bundle's code cache at exit.
execFileSync(process.execPath, ['scripts/lazy-entry.mjs', 'dist']);
fs.rmSync('dist/index.js.map', { force: true });
