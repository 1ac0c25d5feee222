#!/usr/bin/env node
// The exec-server CLI as shipped (the build copies this file to dist/cli/main.js): it runs the
// bundled server, dist/cli/server.cjs, through V8's code cache (server.cjs.cache, made by the
// build and remade whenever V8 rejects it, e.g. under another Node), so that start-up does not
// compile the whole bundle again. Without a usable cache it simply compiles.
// CommonJS (dist/cli/package.json says so): an ES module entry would start Node's ESM loader
// first, which costs start-up time (npm run bench -- --only startup).
const fs = require('node:fs');
const { createRequire, Module } = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

const file = path.join(__dirname, 'server.cjs');
const cacheFile = `${file}.cache`;
let cachedData;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {
  // no cache yet
}
// The bundle keeps the source's `#!` line, which is not JavaScript inside a function.
const source = fs.readFileSync(file, 'utf8').replace(/^#!.*/, '');
const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
if (cachedData === undefined || script.cachedDataRejected) {
  // Written once the functions that ran are compiled too; a read-only install just goes without.
  process.once('exit', () => {
    try {
      const temporary = `${cacheFile}.${process.pid}`;
      fs.writeFileSync(temporary, script.createCachedData());
      fs.renameSync(temporary, cacheFile);
    } catch {
      // not writable
    }
  });
}
const bundle = { exports: {}, filename: file, id: file, loaded: false };
script.runInThisContext().call(bundle.exports, bundle.exports, createRequire(file), bundle, file, path.dirname(file));
