#!/usr/bin/env node
// The exec-server CLI as shipped (the build copies this file to dist/cli/main.js): it runs the
// bundled server, dist/cli/server.cjs, through V8's code cache (server.cjs.cache, made by the
// build and remade whenever V8 rejects it, e.g. under another Node), so that start-up does not
// compile the whole bundle again. Without a usable cache it simply compiles.
import fs from 'node:fs';
import { createRequire, Module } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const file = fileURLToPath(new URL('./server.cjs', import.meta.url));
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
const module = { exports: {}, filename: file, id: file, loaded: false };
script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file));
