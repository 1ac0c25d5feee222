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
 * The facades are made at build time from the modules themselves. An eager
 * facade exports the values the module has at start-up; a lazy facade
 * exports its lowercase functions (classes and constants through the
 * default export).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const NAMESPACE = 'facade';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const RESERVED = new Set(['default', 'delete', 'new', 'function', 'class', 'enum', 'export', 'import', 'super', 'this']);

function exportable(module) {
  return Object.keys(module).filter((key) => IDENTIFIER.test(key) && !RESERVED.has(key));
}

/**
 * A builtin's accessors are lazy getters (`fs.promises` loads `fs/promises`): a
 * function among them is exported as a wrapper, others only through the
 * default export. A package's accessors (TypeScript's re-exports) are read
 * at start-up like its values.
 */
function eagerFacade(specifier) {
  const module = require(specifier);
  const builtin = specifier.startsWith('node:');
  const isAccessor = (key) => Boolean(Object.getOwnPropertyDescriptor(module, key)?.get);
  const keys = exportable(module);
  const values = keys.filter((key) => !builtin || !isAccessor(key));
  const wrapped = keys.filter((key) => builtin && isAccessor(key) && /^[a-z]/.test(key) && typeof module[key] === 'function');
  return [
    `const real = require(${JSON.stringify(specifier)});`,
    'export default real;',
    values.length > 0 ? `export const { ${values.join(', ')} } = real;` : '',
    ...wrapped.map((key) => `export function ${key}(...args) { return real.${key}(...args); }`),
  ].join('\n');
}

function lazyFacade(specifier) {
  const module = require(specifier);
  const keys = exportable(module);
  const functions = keys.filter((key) => /^[a-z]/.test(key) && typeof module[key] === 'function');
  return [
    'let real;',
    `const load = () => (real ??= require(${JSON.stringify(specifier)}));`,
    `const keys = ${JSON.stringify(keys)};`,
    'export default new Proxy({}, {',
    '  get: (_, key) => load()[key],',
    '  has: (_, key) => key in load(),',
    // Listing the keys does not load the module (esbuild's helpers list them).
    '  ownKeys: () => keys,',
    '  getOwnPropertyDescriptor: (_, key) => (keys.includes(key) ? { configurable: true, enumerable: true, get: () => load()[key] } : undefined),',
    '});',
    ...functions.map((key) => `export function ${key}(...args) { return load().${key}(...args); }`),
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
