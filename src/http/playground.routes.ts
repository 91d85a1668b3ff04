import { Type } from '@sinclair/typebox';
import type { EvaluationContext } from '../domain/evaluation/context.js';
import { advancedPlayground, playground, type PlaygroundEnvironment } from '../domain/evaluation/playground.js';
import { NotFoundError } from '../shared/errors.js';
import type { RouteDeps, RouteModule } from './deps.js';
import {
  AdvancedPlaygroundRequestSchema,
  AdvancedPlaygroundResponseSchema,
  PlaygroundRequestSchema,
  PlaygroundResponseSchema,
} from './sdk.schemas.js';
import { can } from './plugins/access.js';

/** Each environment's flags as SDKs read them (of the projects asked for); an unknown environment is a 404. */
async function playgroundEnvironments(deps: RouteDeps, environments: string[], projects: '*' | string[]): Promise<PlaygroundEnvironment[]> {
  const known = await deps.db.selectFrom('environments').select('name').where('name', 'in', environments).execute();
  const missing = environments.find((environment) => !known.some((row) => row.name === environment));
  if (missing !== undefined) throw new NotFoundError(`Could not find environment "${missing}"`);
  return Promise.all(
    environments.map(async (environment) => {
      const configuration = await deps.clientFeatures.configuration(environment);
      const features = configuration.features.filter((feature) => projects === '*' || projects.includes(feature.project));
      return { environment, features, configuration };
    }),
  );
}

export const playgroundRoutes: RouteModule = async (app, { deps }) => {
  app.post(
    '/api/admin/playground',
    {
      schema: { tags: ['Playground'], body: Type.Ref(PlaygroundRequestSchema), response: { 200: Type.Ref(PlaygroundResponseSchema) } },
      config: { access: can('READ') },
    },
    async (request) => {
      const { environment, projects = '*', context } = request.body;
      const [{ features, configuration }] = (await playgroundEnvironments(deps, [environment], projects)) as [PlaygroundEnvironment];
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

  app.post(
    '/api/admin/playground/advanced',
    {
      schema: {
        tags: ['Playground'],
        body: Type.Ref(AdvancedPlaygroundRequestSchema),
        response: { 200: Type.Ref(AdvancedPlaygroundResponseSchema) },
      },
      config: { access: can('READ') },
    },
    async (request) => {
      const { environments, projects = '*', context } = request.body;
      return {
        input: request.body,
        features: advancedPlayground(await playgroundEnvironments(deps, environments, projects), context),
      };
    },
  );
};
