import type { FastifyInstance } from 'fastify';

/** `name{label="value",…}` → value, for every sample of a Prometheus exposition. */
export function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const split = line.lastIndexOf(' ');
    samples.set(line.slice(0, split), Number(line.slice(split + 1)));
  }
  return samples;
}

/**
 * One series of an app's `/internal-backstage/prometheus`, by its name and labels as the exposition writes them
 * (`vexil_client_api_requests_total{endpoint="GET /api/client/features",status_code="200"}`); NaN when absent.
 */
export async function scrapedValue(app: FastifyInstance, series: string): Promise<number> {
  const text = (await app.inject({ method: 'GET', url: '/internal-backstage/prometheus' })).body;
  return parseSamples(text).get(series) ?? Number.NaN;
}
