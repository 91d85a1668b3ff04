/** Vexil as `npm start` runs it, started by the benchmarks as a process of its own. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../test/helpers/free-port.js';

export const TOKEN = '*:*.benchmark-admin-token-0123456789abcdef';
/** The server as `npm start` runs it: compiled, without the TypeScript loader (npm run bench builds first). */
const MAIN = join(import.meta.dirname, '../dist/main.js');

export interface Server {
  process: ChildProcess;
  baseUrl: string;
  /** From spawning the process to its first healthy answer, as an orchestrator sees start-up. */
  toHealthyMs: number;
  /** What the server wrote to standard output, when it was captured. */
  output: () => string;
}

/** Starts dist/main.js on a free port; its logs go to stderr unless `captureOutput`, so the report on stdout stays clean. */
export async function startServer(env: Record<string, string>, options: { captureOutput?: boolean } = {}): Promise<Server> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      INIT_ADMIN_API_TOKENS: TOKEN,
      // The delivery-lag receiver listens on 127.0.0.1.
      INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true',
      ...env,
    },
    stdio: options.captureOutput ? ['ignore', 'pipe', 'inherit'] : ['ignore', process.stderr, process.stderr],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Vexil exited with ${child.exitCode} while starting: ${output}`);
    try {
      if ((await fetch(`${baseUrl}/health`)).ok) {
        return { process: child, baseUrl, toHealthyMs: performance.now() - started, output: () => output };
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A new SDK token for the production environment (every project), made with an admin token; its secret. */
export async function createSdkToken(baseUrl: string, adminToken: string, type: 'client' | 'frontend', label: string): Promise<string> {
  const created = await fetch(`${baseUrl}/api/admin/api-tokens`, {
    method: 'POST',
    headers: { authorization: adminToken, 'content-type': 'application/json' },
    body: JSON.stringify({ tokenName: `bench-${label}-${Date.now()}`, type, environment: 'production', projects: ['*'] }),
  });
  if (!created.ok) throw new Error(`creating a ${type} token answered ${created.status}: ${await created.text()}`);
  return ((await created.json()) as { secret: string }).secret;
}
