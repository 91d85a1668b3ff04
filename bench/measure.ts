/** What the benchmarks share: a case measured with autocannon, the server's memory, percentiles. */
import { readFile } from 'node:fs/promises';
import autocannon from 'autocannon';

export interface Case {
  name: string;
  path: string;
  /** The request's headers: the token it is sent with (SDK cases send a client token, and the ETag they hold). */
  headers?: Record<string, string>;
  /** The second column's concurrency: 16 by default. */
  connections?: number;
  /** Each request's own path and body instead of `path`: a new user id, a new description… */
  requestOf?: () => { path: string; body?: string };
  method?: 'GET' | 'PUT' | 'POST';
}

export interface Measurement {
  requestsPerSecond: number;
  p50: number;
  /** autocannon's nearest percentile above p95: a figure at or under a p95 target holds the target. */
  p97_5: number;
  p99: number;
  errors: number;
}

/**
 * Waits until the server answers a trivial request quickly again: queries of a slow case can outlive its
 * load and would otherwise be measured as the next case's latency.
 */
export async function drain(baseUrl: string, path = '/health'): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const started = performance.now();
    await fetch(`${baseUrl}${path}`);
    if (performance.now() - started < 20) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function measure(baseUrl: string, benchCase: Case, connections: number, duration: number): Promise<Measurement> {
  const requestOf = benchCase.requestOf;
  const result = await autocannon({
    url: `${baseUrl}${benchCase.path}`,
    connections,
    duration,
    method: benchCase.method ?? 'GET',
    headers: benchCase.headers ?? {},
    ...(requestOf ? { requests: [{ setupRequest: (request) => ({ ...request, ...requestOf() }) }] } : {}),
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p97_5: result.latency.p97_5,
    p99: result.latency.p99,
    // A 304 is the answer an SDK polling with a current ETag wants.
    errors: result['4xx'] + result['5xx'] + result.errors + result.timeouts,
  };
}

export async function rssKiB(pid: number): Promise<number> {
  return (await residentMiB(pid)).total * 1024;
}

/**
 * A process's resident memory in MiB, and its two parts: anonymous (its heaps) and mapped from files (mostly the
 * Node binary's code, shared by every Node process on the host and dropped by the kernel first under pressure).
 */
export async function residentMiB(pid: number): Promise<{ total: number; anonymous: number; files: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kiB = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { total: kiB('VmRSS') / 1024, anonymous: kiB('RssAnon') / 1024, files: kiB('RssFile') / 1024 };
}

export /** The value below which `fraction` of the sorted samples lie. */
function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

export const ms = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} ms`;
