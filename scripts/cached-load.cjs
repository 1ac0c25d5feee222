// Runs a bundled CommonJS file through V8's code cache (`<file>.cache`, made by the build and remade
// whenever V8 rejects it, e.g. under another Node), so that start-up does not compile the whole
// bundle again; without a usable cache it simply compiles. Shipped as dist/cached-load.cjs and
// used by the CLI (dist/cli/main.js) and the library (dist/index.js): ES modules get no code cache
// in Node 20, and an ES module entry starts Node's ESM loader first (npm run bench -- --only startup).
const fs = require('node:fs');
const { createRequire, Module } = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

/**
 * A cache begins with the path of the file it was made for, on a line of its own: V8 keeps that
 * path in the code it restores, so a cache made elsewhere (at build time, before the package was
 * installed) would show stack traces pointing there. It is remade for the file where it is now.
 */
function header(file) {
  return Buffer.from(`${file}\n`);
}

/** The cache made for `file` at its present path, or undefined. */
function readCache(file) {
  try {
    const cache = fs.readFileSync(`${file}.cache`);
    const expected = header(file);
    return cache.subarray(0, expected.length).equals(expected) ? cache.subarray(expected.length) : undefined;
  } catch {
    return undefined; // no cache yet
  }
}

/** Runs `file` once and returns its exports. */
function loadCached(file) {
  const cacheFile = `${file}.cache`;
  const cachedData = readCache(file);
  // A `#!` line is not JavaScript inside a function (bundle.mjs turns the bundle's into a comment).
  // bundle.mjs leaves only ASCII in a bundle, so latin1 reads it as UTF-8 would, without decoding.
  const text = fs.readFileSync(file, 'latin1');
  const source = text.startsWith('#!') ? `//${text.slice(2)}` : text;
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  if (cachedData === undefined || script.cachedDataRejected) {
    // Written once the functions that ran are compiled too; a read-only install just goes without.
    process.once('exit', () => {
      try {
        const temporary = `${cacheFile}.${process.pid}`;
        fs.writeFileSync(temporary, Buffer.concat([header(file), script.createCachedData()]));
        fs.renameSync(temporary, cacheFile);
      } catch {
        // not writable
      }
    });
  }
  const bundle = { exports: {}, filename: file, id: file, loaded: false };
  script.runInThisContext().call(bundle.exports, bundle.exports, createRequire(file), bundle, file, path.dirname(file));
  return bundle.exports;
}

module.exports = { loadCached };
