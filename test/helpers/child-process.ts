import { spawn } from 'node:child_process';

export interface ProcessOutcome {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command in a process of its own without blocking this one (a server the command calls can answer from
 * here), with exactly the environment given, and resolves once it has ended.
 */
export function runProcess(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<ProcessOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
