import { sql } from 'kysely';
import { Type } from '@sinclair/typebox';
import { ServiceUnavailableError } from '../shared/errors.js';
import type { RouteModule } from './deps.js';
import { PUBLIC } from './plugins/route-access.js';

const HealthSchema = Type.Object({ health: Type.Literal('GOOD') });

export const healthRoutes: RouteModule = async (app, { deps }) => {
  // Liveness: the process serves requests. It never waits for the database, so a busy database (or the embedded
  // engine's one connection serving exports) cannot make an orchestrator restart a healthy server.
  app.get('/health', { schema: { tags: ['Operational'], response: { 200: HealthSchema } }, config: { access: PUBLIC } }, async () => ({
    health: 'GOOD' as const,
  }));

  // Readiness: the database answers, so requests can be served; 503 otherwise. `/ready` is Unleash's path for it.
  for (const path of ['/ready', '/health/ready']) {
    app.get(path, { schema: { tags: ['Operational'], response: { 200: HealthSchema } }, config: { access: PUBLIC } }, async (request) => {
      try {
        await sql`SELECT 1`.execute(deps.db);
      } catch (error) {
        request.log.error({ err: error }, 'Readiness check: the database does not answer');
        throw new ServiceUnavailableError('The database does not answer');
      }
      return { health: 'GOOD' as const };
    });
  }
};
