import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../shared/clock.js';

/** What route modules are given: the database, the clock and the configuration. */
export interface AppDeps {
  db: Db;
  clock: Clock;
  config: Config;
}

export type RouteModule = FastifyPluginAsyncTypebox<{ deps: AppDeps }>;
