#!/usr/bin/env node
// The exec-server CLI as shipped (the build copies this file to dist/cli/main.js): the bundled
// server, dist/cli/server.cjs, run through V8's code cache (see cached-load.cjs). CommonJS
// (dist/cli/package.json says so), so that Node does not start its ESM loader first.
const path = require('node:path');
const { loadCached } = require('../cached-load.cjs');

loadCached(path.join(__dirname, 'server.cjs'));
