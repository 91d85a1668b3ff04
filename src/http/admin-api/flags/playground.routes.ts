import { Type } from '@sinclair/typebox';
import type { EvaluationContext } from '../../../domain/evaluation/context.js';
import {
  advancedPlayground,
  playground,
  playgroundEnvironments,
  type PlaygroundEnvironment,
} from '../../../domain/evaluation/playground.js';
import type { RouteModule } from '../../deps.js';
import {
  AdvancedPlaygroundRequestSchema,
  AdvancedPlaygroundResponseSchema,
  PlaygroundRequestSchema,
  PlaygroundResponseSchema,
} from '../../sdk.schemas.js';
import { can } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';

export const playgroundRoutes: RouteModule = async (app, { deps }) => {
  app.post(
    '/api/admin/playground',
    {
      schema: { tags: ['Playground'], body: Type.Ref(PlaygroundRequestSchema), response: { 200: Type.Ref(PlaygroundResponseSchema) } },
      config: { access: can('READ') },
    },
    async (request) => {
      const { environment, projects = '*', context } = request.body;
      const [{ features, configuration }] = (await playgroundEnvironments(deps, actorOf(request), [environment], projects)) as [
        PlaygroundEnvironment,
      ];
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
        features: advancedPlayground(await playgroundEnvironments(deps, actorOf(request), environments, projects), context),
      };
    },
  );
};
