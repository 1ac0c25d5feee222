#!/usr/bin/env node
// Bundles the CLI into dist/cli/main.js and the library into dist/index.js (after tsc), so that
// start-up reads a few files instead of a hundred modules: node-pty stays external (a native
// addon), undici and execa are split into their own chunks (loaded on first use).
// `npm run bench -- --only startup` shows what it saves.
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

await build({ ...common, entryPoints: { main: 'src/cli/main.ts' }, outdir: 'dist/cli' });
// The library too (dist/index.js; tsc's .d.ts files stay): execa and undici load on first use.
await build({ ...common, entryPoints: { index: 'src/index.ts' }, outdir: 'dist' });
