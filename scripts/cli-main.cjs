#!/usr/bin/env node
// The exec-server CLI as shipped (the build copies this file to dist/cli/main.js): the bundled
// CLI, dist/cli/front.cjs, run through V8's code cache (see cached-load.cjs); it loads the server,
// dist/cli/server.cjs, the same way once it has read the first line (src/cli/main.ts). CommonJS
// (dist/cli/package.json says so), so that Node does not start its ESM loader first.
const path = require('node:path');
const { loadCached } = require('../cached-load.cjs');

loadCached(path.join(__dirname, 'front.cjs'));
