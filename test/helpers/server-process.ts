import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from './eventually.js';

/** Vexil as separate processes, run from the sources as `npm start` and `npm run admin` run the build. */
export const MAIN = join(import.meta.dirname, '../../src/main.ts');
const ADMIN_COMMAND = join(import.meta.dirname, '../../src/cli/admin.ts');

/** Runs `npm run admin -- …` as the sources; resolves with its exit code and output. */
export function runAdminCommand(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ADMIN_COMMAND, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

export async function logIn(baseUrl: string, username: string, password: string): Promise<number> {
  const response = await fetch(`${baseUrl}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return response.status;
}

export interface RunningServer {
  process: ChildProcess;
  baseUrl: string;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Starts `src/main.ts` on a free port of 127.0.0.1 with only the given variables (and PATH) and resolves once it
 * listens. `onOutput` sees what the server writes while it starts, e.g. to act when it logs something.
 */
export function startServer(env: Record<string, string>, onOutput?: (output: string) => void): Promise<RunningServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      onOutput?.(output);
      const listening = output.match(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/);
      // What the server prints after listening (the first-start password) may come later: see waitForOutput.
      if (listening) {
        resolve({ process: child, baseUrl: listening[1]!, output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    exited.then((code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}

/** Waits until the server has written something matching the pattern (e.g. the first-start password) and returns the match. */
export async function waitForOutput(server: RunningServer, pattern: RegExp, timeout = 10_000): Promise<RegExpMatchArray> {
  await eventually(() => pattern.test(server.output()), timeout).catch(() => {
    throw new Error(`the server never wrote ${pattern}: ${server.output()}`);
  });
  return server.output().match(pattern)!;
}

export async function stopServer(server: RunningServer): Promise<number | null> {
  server.process.kill('SIGTERM');
  return server.exited;
}
