/**
 * The module graph of src/: no import cycles, and dependencies pointing one
 * way between folders (the layering the README draws).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(new URL('../../src', import.meta.url).pathname);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** file → the src files it imports (type-only imports included). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/^(?:import|export)\b[^;]*?from '(\.[^']+)'/gms)].map((match) =>
      path.resolve(path.dirname(file), match[1]!.replace(/\.js$/, '.ts')),
    );
    graph.set(file, targets);
  }
  return graph;
}

function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'visiting') return [...stack.slice(stack.indexOf(file)), file];
    state.set(file, 'visiting');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

const folder = (file: string) => path.relative(SRC, file).split(path.sep)[0]!;

/** Which folders each folder may import from (besides itself). */
const ALLOWED: Record<string, string[]> = {
  package: [],
  protocol: [],
  transport: ['protocol'],
  server: ['package', 'protocol', 'transport'],
  client: ['package', 'protocol', 'transport'],
  executor: ['protocol', 'client', 'server'],
  sessions: ['protocol', 'client', 'executor'],
  cli: ['package', 'protocol', 'transport', 'server'],
  'index.ts': ['protocol', 'transport', 'server', 'client', 'executor', 'sessions'],
};

describe('the module graph of src/', () => {
  const graph = importGraph();

  it('resolves every relative import to a file that exists', () => {
    for (const [file, targets] of graph) for (const target of targets) expect(fs.existsSync(target), `${file} → ${target}`).toBe(true);
  });

  it('has no import cycle', () => {
    const cycle = findCycle(graph);
    expect(cycle?.map((file) => path.relative(SRC, file))).toBeUndefined();
  });

  it('points one way between folders', () => {
    const violations: string[] = [];
    for (const [file, targets] of graph) {
      const from = folder(file);
      for (const target of targets) {
        const to = folder(target);
        if (to !== from && !ALLOWED[from]?.includes(to)) violations.push(`${path.relative(SRC, file)} → ${path.relative(SRC, target)}`);
      }
    }
    expect(violations).toEqual([]);
  });
});
