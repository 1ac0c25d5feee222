#!/usr/bin/env node
// Writes dist/index.js, the library's ES module entry, over dist/lib.cjs (run by scripts/bundle.mjs
// in a fresh process: loading the bundle here also writes its code cache at exit, see
// cached-load.cjs). Importing the package then reads no bundle at all: an extension that imports it
// at activation pays for the library when it first uses it (`npm run bench -- --only startup`).
//
// Each export of the bundle becomes, in the entry:
// - plain data (numbers, strings, objects of them): a copy, so that reading it loads nothing;
// - a function: a function of the same name that loads the library and calls it;
// - a class (or an object such as `silentLogger`): a Proxy that loads the library on first touch
//   and forwards everything to the real one: `new`, static methods, `instanceof` (through the
//   real `prototype`), `class Mine extends ExecServerClient` (its `new.target` is kept), spies.
//   The load then makes each such export the real one (ES module bindings are live).
import fs from 'node:fs';
import path from 'node:path';
import { loadCached } from './cached-load.cjs';

const dist = path.resolve(process.argv[2] ?? 'dist');
const lib = loadCached(path.join(dist, 'lib.cjs'));

const isScalar = (value) => ['number', 'string', 'boolean'].includes(typeof value);
const isData = (value) =>
  isScalar(value) ||
  (value !== null &&
    typeof value === 'object' &&
    Object.getPrototypeOf(value) === Object.prototype &&
    Object.values(value).every(isScalar));

/** The exports that start as stand-ins: once the library is loaded, their bindings become the real ones. */
const standIns = [];

function exportOf(name, value) {
  if (isData(value)) return `export const ${name} = ${JSON.stringify(value)};`;
  if (typeof value === 'function' && !/^class\b/.test(Function.prototype.toString.call(value)))
    return `export function ${name}(...args) {\n  return load().${name}(...args);\n}`;
  standIns.push(name);
  return `export let ${name} = lazy(${JSON.stringify(name)}, ${typeof value === 'function' ? 'function () {}' : '{}'});`;
}

const PRELUDE = `// Made by scripts/lazy-entry.mjs: the library (dist/lib.cjs, through V8's code cache) is loaded
// on first use of one of its exports, not at import.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

let lib;
function load() {
  if (lib === undefined) {
    const { loadCached } = createRequire(import.meta.url)('./cached-load.cjs');
    lib = loadCached(fileURLToPath(new URL('./lib.cjs', import.meta.url)));
    takeRealOnes(lib);
  }
  return lib;
}

/** Stands for the library's export \`name\` (a class or an object) and forwards every use to it. */
function lazy(name, target) {
  const real = () => load()[name];
  const stand = new Proxy(target, {
    get: (_, key) => Reflect.get(real(), key),
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => [...new Set([...Reflect.ownKeys(real()), ...Reflect.ownKeys(target)])],
    getOwnPropertyDescriptor: (_, key) => Reflect.getOwnPropertyDescriptor(key in target ? target : real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
    apply: (_, self, args) => Reflect.apply(real(), self, args),
    construct: (_, args, newTarget) => Reflect.construct(real(), args, newTarget === stand ? real() : newTarget),
    // A spy or mock put on the stand-in (vi.spyOn(ExecServerClient, 'spawn')) goes on the real one.
    defineProperty: (_, key, descriptor) => Reflect.defineProperty(real(), key, descriptor),
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
  });
  return stand;
}
`;

const exports = Object.entries(lib).map(([name, value]) => exportOf(name, value));
// ES module bindings are live: from the first use on, importers see the library's own classes
// (\`instance.constructor === ExecServerClient\`); only a value copied before that stays a stand-in.
const takeRealOnes = `function takeRealOnes(real) {\n${standIns.map((name) => `  ${name} = real.${name};`).join('\n')}\n}\n`;
const entry = [PRELUDE, takeRealOnes, ...exports, ''].join('\n');
fs.writeFileSync(path.join(dist, 'index.js'), entry);
