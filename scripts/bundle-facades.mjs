/**
 * An esbuild plugin for start-up time: every import of a node builtin (and of
 * vscode-jsonrpc) goes through one ES module facade per module, so that
 *
 * - an importing module does not copy the whole module object again: esbuild
 *   wraps each default or namespace import of a CommonJS module in `__toESM`,
 *   which defines a getter per export, per importing module;
 * - the builtins a session may never need (`lazy`) are required when first
 *   used, not when the bundle starts: the facade exports a function per
 *   function of the module, and a proxy as its default export.
 *
 * The facades are made at build time from the modules as a fresh Node
 * shows them. An eager facade exports a builtin's functions (other values
 * through its default export); a lazy facade exports its lowercase
 * functions (classes and constants through the default export, a proxy).
 */
import { execFileSync } from 'node:child_process';

const NAMESPACE = 'facade';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const RESERVED = new Set(['default', 'delete', 'new', 'function', 'class', 'enum', 'export', 'import', 'super', 'this']);

/**
 * What each export of `specifier` is, seen in a fresh Node (this process may
 * have touched a builtin's lazy getters, which then read as plain values):
 * `[name, 'function' | 'value', accessor]`.
 */
function shapeOf(specifier) {
  const script = `const m = require(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m).map((k) => {
    const accessor = Boolean(Object.getOwnPropertyDescriptor(m, k).get);
    return [k, typeof m[k] === 'function' ? 'function' : 'value', accessor];
  })))`;
  const shape = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
  return shape.filter(([key]) => IDENTIFIER.test(key) && !RESERVED.has(key));
}

/** Value exports of builtins read at start-up all the same: plain data in every Node (`fs.constants`). */
const PLAIN_VALUES = new Set(['constants']);

const wrapper = (key) => `export function ${key}(...args) { return load().${key}(...args); }`;

/**
 * A builtin's facade reads nothing at start-up but its functions: a value
 * export (a constant, or a getter such as `fs.promises` that loads a module,
 * or `fs.F_OK`, which newer Nodes deprecate on read) is reached through the
 * default export only, and a function behind a getter through a wrapper. A
 * package's exports (TypeScript's re-exports, cheap getters) are all read.
 */
function eagerFacade(specifier) {
  const shape = shapeOf(specifier);
  const builtin = specifier.startsWith('node:');
  const read = ([key, type, accessor]) => !builtin || (!accessor && (type === 'function' || PLAIN_VALUES.has(key)));
  const values = shape.filter(read).map(([key]) => key);
  const wrapped = shape.filter(([key, type, accessor]) => builtin && type === 'function' && accessor && /^[a-z]/.test(key));
  return [
    `const real = require(${JSON.stringify(specifier)});`,
    'const load = () => real;',
    'export default real;',
    values.length > 0 ? `export const { ${values.join(', ')} } = real;` : '',
    ...wrapped.map(([key]) => wrapper(key)),
  ].join('\n');
}

function lazyFacade(specifier) {
  const shape = shapeOf(specifier);
  const keys = shape.map(([key]) => key);
  const functions = shape.filter(([key, type]) => type === 'function' && /^[a-z]/.test(key)).map(([key]) => key);
  return [
    'let real;',
    `const load = () => (real ??= require(${JSON.stringify(specifier)}));`,
    `const keys = ${JSON.stringify(keys)};`,
    'export default new Proxy({}, {',
    '  get: (_, key) => load()[key],',
    '  set: (_, key, value) => Reflect.set(load(), key, value),',
    '  has: (_, key) => key in load(),',
    // Listing the keys does not load the module (esbuild's helpers list them).
    '  ownKeys: () => keys,',
    '  getOwnPropertyDescriptor: (_, key) => (keys.includes(key) ? { configurable: true, enumerable: true, get: () => load()[key] } : undefined),',
    '});',
    ...functions.map(wrapper),
  ].join('\n');
}

/** `eager` and `lazy`: module specifiers, as imported (`node:fs`, `vscode-jsonrpc/node`). */
export function facades({ eager, lazy }) {
  const all = new Set([...eager, ...lazy]);
  return {
    name: 'facades',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        // The facade's own require of the real module resolves as usual; so do a package's ES
        // module imports (execa's `import { ChildProcess }` wants the class itself).
        if (!all.has(args.path) || args.namespace === NAMESPACE) return undefined;
        if (args.importer.includes('/node_modules/') && args.kind !== 'require-call') return undefined;
        return { path: args.path, namespace: NAMESPACE };
      });
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: lazy.includes(args.path) ? lazyFacade(args.path) : eagerFacade(args.path),
        loader: 'js',
        resolveDir: process.cwd(),
      }));
    },
  };
}
