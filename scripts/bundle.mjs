#!/usr/bin/env node
// Bundles the CLI into dist/cli/main.js (after tsc), so that a server starts by reading a few
// files instead of a hundred modules: node-pty stays external (a native addon), undici is split
// into its own chunk (loaded on the first http/request). `npm run bench -- --only startup` shows
// what it saves.
import { build } from 'esbuild';

await build({
  entryPoints: { main: 'src/cli/main.ts' },
  outdir: 'dist/cli',
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
});
