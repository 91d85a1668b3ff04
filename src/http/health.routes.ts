import { sql } from 'kysely';
import { Type } from '@sinclair/typebox';
import { ServiceUnavailableError } from '../shared/errors.js';
import type { RouteModule } from './deps.js';
import { PUBLIC } from './plugins/route-access.js';

const HealthSchema = Type.Object({ health: Type.Literal('GOOD') });

/** The orchestrators' liveness probe: answers while the process runs, also while it waits for its database. */
export const LIVENESS_PATH = '/health/live';

export const healthRoutes: RouteModule = async (app, { deps }) => {
  // Unleash's `/health` is GOOD once the server serves (a 503 before, from the starting probe), and the liveness
  // path answers the same here. Neither waits for the database, so a busy database (or the embedded engine's one
  // connection serving exports) cannot make an orchestrator restart a healthy server.
  for (const path of ['/health', LIVENESS_PATH]) {
    app.get(path, { schema: { tags: ['Operational'], response: { 200: HealthSchema } }, config: { access: PUBLIC } }, async () => ({
      health: 'GOOD' as const,
    }));
  }

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
