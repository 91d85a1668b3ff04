import { Type } from '@sinclair/typebox';
import type { EvaluationContext } from '../domain/evaluation/context.js';
import { playground } from '../domain/evaluation/playground.js';
import { NotFoundError } from '../shared/errors.js';
import type { RouteModule } from './deps.js';
import { PlaygroundRequestSchema, PlaygroundResponseSchema } from './sdk.schemas.js';
import { can } from './plugins/access.js';

export const playgroundRoutes: RouteModule = async (app, { deps }) => {
  app.post(
    '/api/admin/playground',
    {
      schema: { tags: ['Playground'], body: Type.Ref(PlaygroundRequestSchema), response: { 200: Type.Ref(PlaygroundResponseSchema) } },
      config: { access: can('READ') },
    },
    async (request) => {
      const { environment, projects = '*', context } = request.body;
      const known = await deps.db.selectFrom('environments').select('name').where('name', '=', environment).executeTakeFirst();
      if (!known) throw new NotFoundError(`Could not find environment "${environment}"`);
      const configuration = await deps.clientFeatures.configuration(environment);
      const features = configuration.features.filter((feature) => projects === '*' || projects.includes(feature.project));
      const evaluationContext: EvaluationContext = {
        ...(context as EvaluationContext),
        environment,
        ...(context.currentTime ? { currentTime: new Date(context.currentTime) } : {}),
      };
      return {
        input: request.body,
        features: playground(features, configuration, evaluationContext),
      };
    },
  );
};
