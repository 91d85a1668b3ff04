import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './free-port.js';

/** Debian's redis-server, where it is installed (`.ci/run` installs it). */
const REDIS_SERVER = '/usr/bin/redis-server';

export const redisMissing = existsSync(REDIS_SERVER) ? false : `${REDIS_SERVER} is not installed (apt-get install redis-server)`;

export interface RunningRedis {
  url: string;
  stop(): Promise<void>;
}

/** A throw-away Redis on a free port, in memory only; stop() ends it by its PID. */
export async function startRedis(): Promise<RunningRedis> {
  const port = await freePort();
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let attempt = 0; ; attempt++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) break;
    if (attempt > 200 || child.exitCode !== null) throw new Error('redis-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
