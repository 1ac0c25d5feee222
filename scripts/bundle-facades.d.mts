import type { Plugin } from 'esbuild';

/** The esbuild plugin of bundle-facades.mjs: `eager` and `lazy` are module specifiers, as imported. */
export function facades(options: { eager: string[]; lazy: string[] }): Plugin;
