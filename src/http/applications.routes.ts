import { Type } from '@sinclair/typebox';
import { boundedRead } from '../db/bounded-read.js';
import { listApplications } from '../domain/client-features/applications.queries.js';
import { NotFoundError } from '../shared/errors.js';
import type { RouteModule } from './deps.js';
import { ApplicationSchema, ApplicationsQuerySchema, ApplicationsSchema } from './sdk.schemas.js';
import { readBoundsOf } from './read-bounds.js';
import { can } from './plugins/access.js';

const tags = ['Metrics'];

/** Applications as SDKs registered them (`POST /api/client/register`), by name, paged and searchable. */
export const applicationRoutes: RouteModule = async (app, { deps }) => {
  app.get(
    '/api/admin/metrics/applications',
    {
      schema: { tags, querystring: ApplicationsQuerySchema, response: { 200: Type.Ref(ApplicationsSchema) } },
      config: { access: can('READ') },
    },
    async (request, reply) => boundedRead(deps.db, readBoundsOf(deps, reply), (db) => listApplications(db, request.query)),
  );

  app.get(
    '/api/admin/metrics/applications/:appName',
    {
      schema: {
        tags,
        params: Type.Object({ appName: Type.String({ minLength: 1, maxLength: 255 }) }),
        response: { 200: Type.Ref(ApplicationSchema) },
      },
      config: { access: can('READ') },
    },
    async (request) => {
      const application = await deps.db
        .selectFrom('client_applications')
        .selectAll()
        .where('app_name', '=', request.params.appName)
        .executeTakeFirst();
      if (!application) throw new NotFoundError(`Could not find the application "${request.params.appName}"`);
      const instances = await deps.db
        .selectFrom('client_instances')
        .selectAll()
        .where('app_name', '=', application.app_name)
        .orderBy('environment')
        .orderBy('instance_id')
        .execute();
      return {
        appName: application.app_name,
        strategies: application.strategies,
        createdAt: application.created_at.toISOString(),
        seenAt: application.seen_at.toISOString(),
        instances: instances.map((row) => ({
          instanceId: row.instance_id,
          environment: row.environment,
          sdkVersion: row.sdk_version,
          clientIp: row.client_ip,
          started: row.started_at?.toISOString() ?? null,
          interval: row.interval_ms,
          lastSeen: row.seen_at.toISOString(),
        })),
      };
    },
  );
};
