import type { DatabaseConfig } from '../src/config.js';

/** `--database-url` picks PostgreSQL; otherwise the embedded database in `--data-dir` (default ./bench-data). */
export function databaseFromArgs(databaseUrl: string | undefined, dataDir: string | undefined): DatabaseConfig {
  if (databaseUrl) return { kind: 'postgres', url: databaseUrl, poolSize: 10, waitMs: 0, changePollMs: 1000 };
  return { kind: 'pglite', dataDir: dataDir ?? './bench-data' };
}
