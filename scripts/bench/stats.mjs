// Shared constants and statistics of the benchmark scripts.
import fs from 'node:fs';

export const MiB = 1024 * 1024;
export const ENV = { PATH: '/usr/bin:/bin' };
/** The name under which a raw limit (no server at all, or a bare one) takes its turn among the servers. */
export const RAW = '\u0000raw';

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
export const ms = (ns) => Number(ns) / 1e6;
export const summarize = (samples) => ({ p50: percentile(samples, 50), p99: percentile(samples, 99) });
export const mapValues = (object, fn) => Object.fromEntries(Object.entries(object).map(([key, value]) => [key, fn(value)]));
export const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

/** The median of `n` runs of `fn`. */
export async function repeat(n, fn) {
  const results = [];
  for (let i = 0; i < n; i++) results.push(await fn());
  return median(results);
}

/** A process's resident size in bytes (NaN once it is gone). */
export function rss(pid) {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'))[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}
