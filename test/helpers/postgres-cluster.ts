import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { adminQuery } from './test-database.js';
import { freePort } from './free-port.js';

/**
 * A PostgreSQL cluster of the test's own, on a free port of 127.0.0.1, that the test may stop, restart and kill:
 * never the shared server on 5432. Made with Debian's `initdb` and `pg_ctl`, run as the `postgres` user when the
 * test runs as root (PostgreSQL refuses to run as root).
 */
export interface PostgresCluster {
  /** A database of its own on the cluster, for the server under test. */
  url: string;
  port: number;
  stop(): void;
  start(): void;
  restart(): void;
  /** Ends every connection to the test's database but the one asking, as `pg_terminate_backend` does on a failover. */
  terminateConnections(): Promise<number>;
  destroy(): void;
}

/** Debian's newest PostgreSQL server binaries (`/usr/lib/postgresql/<major>/bin`), if any are installed. */
const BIN =
  (existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : [])
    .filter((major) => /^\d+$/.test(major) && existsSync(join('/usr/lib/postgresql', major, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
    .map((major) => join('/usr/lib/postgresql', major, 'bin'))[0] ?? '/usr/lib/postgresql/bin';

/** Why a cluster cannot be made here, if it cannot: the test is then skipped with this message. */
export function clusterUnavailable(): string | undefined {
  if (!existsSync(join(BIN, 'initdb')) || !existsSync(join(BIN, 'pg_ctl'))) return `PostgreSQL's initdb and pg_ctl are not in ${BIN}`;
  if (userInfo().uid === 0 && spawnSync('id', ['postgres']).status !== 0)
    return 'running as root, and there is no postgres user to run PostgreSQL as';
  return undefined;
}

/** Makes the `postgres` user own a directory, for PostgreSQL and PgBouncer run as that user. */
function giveToPostgres(dir: string): void {
  chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const dataDir = mkdtempSync('/tmp/vexil-cluster-');
  const asRoot = userInfo().uid === 0;
  const run = (command: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(BIN, command), ...args]] : [join(BIN, command), args];
    execFileSync(file, argv, { stdio: 'pipe', timeout: 60_000 });
  };
  if (asRoot) giveToPostgres(dataDir);
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${dataDir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const pgCtl = (action: string, ...extra: string[]) =>
    run('pg_ctl', [action, '-D', dataDir, '-o', options, '-l', join(dataDir, 'log'), '-w', ...extra]);
  pgCtl('start');
  const server = `postgres://postgres@127.0.0.1:${port}`;
  await adminQuery(`${server}/postgres`, 'CREATE DATABASE vexil');
  return {
    url: `${server}/vexil`,
    port,
    stop: () => pgCtl('stop', '-m', 'fast'),
    start: () => pgCtl('start'),
    restart: () => pgCtl('restart', '-m', 'fast'),
    terminateConnections: async () => {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: `${server}/postgres` });
      await client.connect();
      try {
        const result = await client.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'vexil' AND pid <> pg_backend_pid()",
        );
        return result.rowCount ?? 0;
      } finally {
        await client.end();
      }
    },
    destroy: () => {
      try {
        pgCtl('stop', '-m', 'immediate');
      } catch {
        // Already stopped.
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** PgBouncer in front of a cluster, in transaction mode (the usual setting), on a free port of its own. */
export interface Pooler {
  /** The test's database through the pooler. */
  url: string;
  close(): void;
}

/** Why PgBouncer cannot be started here, if it cannot. */
export function poolerUnavailable(): string | undefined {
  return existsSync('/usr/sbin/pgbouncer') ? clusterUnavailable() : "Debian's pgbouncer is not installed";
}

export async function startPgBouncer(cluster: PostgresCluster, poolSize = 5): Promise<Pooler> {
  const dir = mkdtempSync('/tmp/vexil-pgbouncer-');
  const port = await freePort();
  const asRoot = userInfo().uid === 0;
  if (asRoot) giveToPostgres(dir);
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `vexil = host=127.0.0.1 port=${cluster.port} dbname=vexil user=postgres`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 200',
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      `logfile = ${join(dir, 'pgbouncer.log')}`,
    ].join('\n'),
  );
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  const [file, argv] = asRoot
    ? ['runuser', ['-u', 'postgres', '--', '/usr/sbin/pgbouncer', '-d', ini]]
    : ['/usr/sbin/pgbouncer', ['-d', ini]];
  execFileSync(file, argv, { stdio: 'pipe', timeout: 30_000 });
  const url = `postgres://postgres@127.0.0.1:${port}/vexil`;
  const { default: pg } = await import('pg');
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (attempt > 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    close: () => {
      try {
        process.kill(Number(readFileSync(join(dir, 'pgbouncer.pid'), 'utf8')), 'SIGTERM');
      } catch {
        // Already gone.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
