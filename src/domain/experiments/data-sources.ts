import { createRequire } from 'node:module';
import type { Selectable } from 'kysely';
import type pg from 'pg';
import type { Db } from '../../db/database.js';
import type { ExperimentDataSourcesTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError, ServiceUnavailableError } from '../../shared/errors.js';
import { seal, unseal } from '../../shared/secrets.js';
import { assertPublicUrl, BlockedAddressError, publicOnlyLookup } from '../addons/outbound-safety.js';
import { recordEvent } from '../events/record-event.js';
import { serverKey } from '../settings/server-keys.js';

/**
 * A warehouse an experiment is analysed in: the customer's PostgreSQL, its address and read-only credentials
 * sealed under a key the instances share (shown again never: the view names the host, database and user only), and
 * the two queries that read their own tables as assignments and events. Like an integration's URL, its host must be
 * public unless the operator allows private networks, checked when it is saved and again at each connection, on the
 * address connected to.
 */
export interface DataSourceInput {
  name: string;
  /** `postgres://user:password@host:5432/database` */
  url: string;
  assignmentQuery: string;
  eventsQuery: string;
}

export interface DataSourceView {
  name: string;
  kind: 'postgres';
  /** `user@host:port/database`, without the password. */
  address: string;
  assignmentQuery: string;
  eventsQuery: string;
  createdAt: string;
}

export interface DataSource extends DataSourceView {
  id: number;
  url: string;
}

const SEALING_KEY = 'experiment-data-sources';

function toView(row: Selectable<ExperimentDataSourcesTable>): DataSourceView {
  return {
    name: row.name,
    kind: row.kind,
    address: row.address,
    assignmentQuery: row.assignment_query,
    eventsQuery: row.events_query,
    createdAt: row.created_at.toISOString(),
  };
}

function parsedUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BadDataError('url must be a PostgreSQL URL: postgres://user:password@host:5432/database', [
      { path: '/body/url', message: 'not a URL' },
    ]);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new BadDataError('url must be a PostgreSQL URL (postgres://…)', [
      { path: '/body/url', message: `${parsed.protocol} is not postgres:` },
    ]);
  }
  if (!parsed.hostname || parsed.pathname.length <= 1) {
    throw new BadDataError('url must name a host and a database', [
      { path: '/body/url', message: 'postgres://user:password@host:5432/database' },
    ]);
  }
  return parsed;
}

const addressOf = (url: URL) => `${decodeURIComponent(url.username) || '(no user)'}@${url.hostname}:${url.port || '5432'}${url.pathname}`;

async function checkedInput(input: DataSourceInput, allowPrivateNetworks: boolean): Promise<URL> {
  const url = parsedUrl(input.url);
  if (!allowPrivateNetworks) {
    await assertPublicUrl(url).catch((error: unknown) => {
      if (error instanceof BlockedAddressError) throw new BadDataError(error.message, [{ path: '/body/url', message: error.message }]);
      throw error;
    });
  }
  return url;
}

export async function listDataSources(db: Db): Promise<DataSourceView[]> {
  return (await db.selectFrom('experiment_data_sources').selectAll().orderBy('name').execute()).map(toView);
}

export async function getDataSource(db: Db, name: string): Promise<DataSource> {
  const row = await db.selectFrom('experiment_data_sources').selectAll().where('name', '=', name).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find data source "${name}"`);
  return unsealed(db, row);
}

export async function dataSourceById(db: Db, id: number): Promise<DataSource> {
  const row = await db.selectFrom('experiment_data_sources').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return unsealed(db, row);
}

async function unsealed(db: Db, row: Selectable<ExperimentDataSourcesTable>): Promise<DataSource> {
  const opened = unseal(await serverKey(db, SEALING_KEY, new Date()), row.connection_sealed) as { url?: string } | undefined;
  if (!opened?.url) throw new ServiceUnavailableError(`The credentials of data source "${row.name}" cannot be read: save them again`);
  return { ...toView(row), id: row.id, url: opened.url };
}

export async function createDataSource(uow: UnitOfWork, input: DataSourceInput, allowPrivateNetworks: boolean): Promise<DataSourceView> {
  const url = await checkedInput(input, allowPrivateNetworks);
  const row = await uow.tx
    .insertInto('experiment_data_sources')
    .values({
      name: input.name,
      kind: 'postgres',
      connection_sealed: seal(await serverKey(uow.tx, SEALING_KEY, uow.now), { url: input.url }),
      address: addressOf(url),
      assignment_query: input.assignmentQuery,
      events_query: input.eventsQuery,
      created_at: uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = toView(row);
  // The event carries what the view shows: never the URL, whose password is a secret.
  await recordEvent(uow, { type: 'experiment-data-source-created', data: view });
  return view;
}

export async function deleteDataSource(uow: UnitOfWork, name: string): Promise<void> {
  const row = await uow.tx.selectFrom('experiment_data_sources').selectAll().where('name', '=', name).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find data source "${name}"`);
  await uow.tx.deleteFrom('experiment_data_sources').where('id', '=', row.id).execute();
  await recordEvent(uow, { type: 'experiment-data-source-deleted', preData: toView(row) });
}

/** The public address a host (a name or a literal) resolves to now, checked. */
function checkedAddress(hostname: string): Promise<string> {
  return new Promise((resolve, reject) =>
    publicOnlyLookup(hostname, {}, (error, address) => (error ? reject(error) : resolve(address as string))),
  );
}

export interface WarehouseLimits {
  allowPrivateNetworks: boolean;
  statementTimeoutMs: number;
}

/**
 * Runs read-only statements in the warehouse: one connection, a read-only transaction with a statement timeout,
 * connected to the address that was checked (so a name that resolves elsewhere later cannot reach a private one).
 */
export async function inWarehouse<T>(source: DataSource, limits: WarehouseLimits, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(source.url);
  let host = url.hostname;
  if (!limits.allowPrivateNetworks) {
    host = await checkedAddress(url.hostname).catch((error: unknown) => {
      throw new BadDataError(`Data source "${source.name}": ${(error as Error).message}`);
    });
  }
  const { Client } = createRequire(import.meta.url)('pg') as typeof import('pg');
  const client = new Client({
    host,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.slice(1)),
    connectionTimeoutMillis: 10_000,
    statement_timeout: limits.statementTimeoutMs,
    application_name: 'vexil-experiments',
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw new ServiceUnavailableError(`Data source "${source.name}" does not answer: ${(error as Error).message}`);
  }
  try {
    await client.query('BEGIN READ ONLY');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    const code = (error as { code?: string }).code;
    // The customer's SQL is theirs to fix: its error is a 400 with the warehouse's message, not a 500.
    if (typeof code === 'string' && /^(42|22|25|57)/.test(code)) {
      throw new BadDataError(`The query of data source "${source.name}" failed in the warehouse: ${(error as Error).message}`);
    }
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Checks the connection and that both queries run and give the columns the analysis reads. */
export async function testDataSource(
  source: DataSource,
  limits: WarehouseLimits,
): Promise<{ assignmentColumns: string[]; eventColumns: string[] }> {
  return inWarehouse(source, limits, async (client) => {
    const columns = async (query: string, wanted: string[], what: string) => {
      const result = await client.query(`SELECT * FROM (${query}) AS q LIMIT 0`);
      const names = result.fields.map((field) => field.name);
      const missing = wanted.filter((name) => !names.includes(name));
      if (missing.length > 0)
        throw new BadDataError(`The ${what} query of data source "${source.name}" lacks the column(s) ${missing.join(', ')}`);
      return names;
    };
    return {
      assignmentColumns: await columns(source.assignmentQuery, ['unit_id', 'timestamp', 'experiment_key', 'variant'], 'assignment'),
      eventColumns: await columns(source.eventsQuery, ['unit_id', 'event', 'timestamp', 'value'], 'events'),
    };
  });
}
