import { Type } from '@sinclair/typebox';
import { searchFeatures } from '../../../domain/search/feature-search.js';
import { boundedRead } from '../../../db/bounded-read.js';
import type { RouteModule } from '../../deps.js';
import { readBoundsOf } from '../../read-bounds.js';
import { SearchFeaturesQuerySchema, SearchFeaturesResponseSchema } from './feature-search.schemas.js';
import { can } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';

export const featureSearchRoutes: RouteModule = async (app, { deps }) => {
  app.get(
    '/api/admin/search/features',
    {
      schema: { tags: ['Search'], querystring: SearchFeaturesQuerySchema, response: { 200: Type.Ref(SearchFeaturesResponseSchema) } },
      config: { access: can('READ') },
    },
    async (request, reply) =>
      boundedRead(deps.db, readBoundsOf(deps, reply), (db) => searchFeatures(db, request.query, actorOf(request), deps.clock.now())),
  );
};
