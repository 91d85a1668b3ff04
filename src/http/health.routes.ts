import { sql } from 'kysely';
import { Type } from '@sinclair/typebox';
import { ServiceUnavailableError } from '../shared/errors.js';
import type { RouteModule } from './deps.js';
import { PUBLIC } from './plugins/access.js';

export const healthRoutes: RouteModule = async (app, { deps }) => {
  app.get(
    '/health',
    {
      schema: { tags: ['Operational'], response: { 200: Type.Object({ health: Type.Literal('GOOD') }) } },
      config: { access: PUBLIC },
    },
    async (request) => {
      try {
        await sql`SELECT 1`.execute(deps.db);
      } catch (error) {
        request.log.error({ err: error }, 'Health check: the database does not answer');
        throw new ServiceUnavailableError('The database does not answer');
      }
      return { health: 'GOOD' as const };
    },
  );
};
