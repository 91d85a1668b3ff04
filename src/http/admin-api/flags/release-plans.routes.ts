import { Type } from '@sinclair/typebox';
import { availableMetrics, metricSeries } from '../../../domain/impact-metrics/impact-metrics.js';
import {
  addPlan,
  deleteProgression,
  getPlan,
  listPlans,
  removePlan,
  resumePlan,
  setProgression,
  startMilestone,
} from '../../../domain/release-plans/plans.js';
import { deleteSafeguard, setSafeguard, TIME_RANGE_MINUTES } from '../../../domain/release-plans/safeguards.js';
import {
  archiveTemplate,
  createTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  updateTemplate,
  type TemplateInput,
} from '../../../domain/release-plans/templates.js';
import { UrlFriendlyName } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';
import {
  AvailableImpactMetricsSchema,
  ChangeMilestoneProgressionSchema,
  CreateReleasePlanSchema,
  CreateReleasePlanTemplateSchema,
  CreateSafeguardSchema,
  ImpactMetricPointsSchema,
  ReleasePlanSafeguardSchema,
  ReleasePlanSchema,
  ReleasePlansSchema,
  ReleasePlanTemplateSchema,
  ReleasePlanTemplatesSchema,
} from './release-plans.schemas.js';

const Uuid = Type.String({ format: 'uuid', errorMessage: 'an id here is a UUID' });
const TemplateParams = Type.Object({ id: Uuid });
const FlagEnvironmentParams = Type.Object({ projectId: UrlFriendlyName, featureName: UrlFriendlyName, environment: UrlFriendlyName });
const PlanParams = Type.Object({ ...FlagEnvironmentParams.properties, planId: Uuid });
const MilestoneParams = Type.Object({ ...PlanParams.properties, milestoneId: Uuid });
const SafeguardParams = Type.Object({ ...PlanParams.properties, safeguardId: Uuid });

const TEMPLATES = '/api/admin/release-plan-templates';
const FLAG_ENVIRONMENT = '/api/admin/projects/:projectId/features/:featureName/environments/:environment';
const PLANS = `${FLAG_ENVIRONMENT}/release_plans`;
const LEGACY_PLANS = `${FLAG_ENVIRONMENT}/release-plans`;

function templateInput(body: typeof CreateReleasePlanTemplateSchema.static): TemplateInput {
  return {
    name: body.name,
    description: body.description,
    milestones: [...body.milestones]
      .map((milestone, index) => ({ milestone, index }))
      // A given sortOrder orders them; without one, the list's order does.
      .sort((a, b) => (a.milestone.sortOrder ?? a.index) - (b.milestone.sortOrder ?? b.index))
      .map(({ milestone }) => ({
        name: milestone.name,
        strategies: milestone.strategies ?? [],
        transitionCondition: milestone.transitionCondition ?? null,
      })),
  };
}

const targetOf = (params: { projectId: string; featureName: string; environment: string }) => ({
  project: params.projectId,
  featureName: params.featureName,
  environment: params.environment,
});

/** Release plan templates, plans on flag environments, their milestones and safeguards, and impact metrics to read. */
export const releasePlanRoutes: RouteModule = async (app, { deps, act }) => {
  const tags = ['Release plans'];
  const route = routesTagged(tags);
  app.get(TEMPLATES, route(can('READ'), { ok: ReleasePlanTemplatesSchema }), async () => listTemplates(deps.db));
  app.post(
    TEMPLATES,
    route(can('CREATE_RELEASE_TEMPLATE'), { body: CreateReleasePlanTemplateSchema, created: ReleasePlanTemplateSchema }),
    async (request, reply) => {
      const template = await act(request, (uow) => createTemplate(uow, templateInput(request.body)));
      return reply.status(201).send(template);
    },
  );
  app.get(`${TEMPLATES}/:id`, route(can('READ'), { params: TemplateParams, ok: ReleasePlanTemplateSchema }), async (request) =>
    getTemplate(deps.db, request.params.id),
  );
  app.put(
    `${TEMPLATES}/:id`,
    route(can('UPDATE_RELEASE_TEMPLATE'), { params: TemplateParams, body: CreateReleasePlanTemplateSchema, ok: ReleasePlanTemplateSchema }),
    async (request) => act(request, (uow) => updateTemplate(uow, request.params.id, templateInput(request.body))),
  );
  app.delete(`${TEMPLATES}/:id`, route(can('DELETE_RELEASE_TEMPLATE'), { params: TemplateParams }), async (request, reply) => {
    await act(request, (uow) => deleteTemplate(uow, request.params.id));
    return reply.status(200).send();
  });
  app.post(`${TEMPLATES}/archive/:id`, route(can('DELETE_RELEASE_TEMPLATE'), { params: TemplateParams }), async (request, reply) => {
    await act(request, (uow) => archiveTemplate(uow, request.params.id));
    return reply.status(200).send();
  });

  // Unleash's own paths say `release_plans`; `release-plans`, Vexil's first spelling, stays as an undocumented alias.
  for (const base of [PLANS, LEGACY_PLANS]) {
    const hide = base === LEGACY_PLANS;
    app.get(base, route(can('READ'), { hide, params: FlagEnvironmentParams, ok: ReleasePlansSchema }), async (request) =>
      listPlans(deps.db, targetOf(request.params)),
    );
    app.post(
      base,
      route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), {
        hide,
        params: FlagEnvironmentParams,
        body: CreateReleasePlanSchema,
        created: ReleasePlanSchema,
      }),
      async (request, reply) => {
        const plan = await act(request, (uow) => addPlan(uow, targetOf(request.params), request.body.templateId));
        return reply.status(201).send(plan);
      },
    );
    app.get(`${base}/:planId`, route(can('READ'), { hide, params: PlanParams, ok: ReleasePlanSchema }), async (request) =>
      getPlan(deps.db, targetOf(request.params), request.params.planId),
    );
    app.delete(
      `${base}/:planId`,
      route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), { hide, params: PlanParams }),
      async (request, reply) => {
        await act(request, (uow) => removePlan(uow, targetOf(request.params), request.params.planId));
        return reply.status(200).send();
      },
    );
    app.post(
      `${base}/:planId/milestones/:milestoneId/start`,
      route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), { hide, params: MilestoneParams, ok: ReleasePlanSchema }),
      async (request) =>
        act(request, (uow) => startMilestone(uow, targetOf(request.params), request.params.planId, request.params.milestoneId)),
    );
    app.post(
      `${base}/:planId/resume`,
      route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), { hide, params: PlanParams, ok: ReleasePlanSchema }),
      async (request) => act(request, (uow) => resumePlan(uow, targetOf(request.params), request.params.planId)),
    );
    app.put(
      `${base}/:planId/safeguards`,
      route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), {
        hide,
        params: PlanParams,
        body: CreateSafeguardSchema,
        ok: ReleasePlanSafeguardSchema,
      }),
      async (request) => {
        const { impactMetric, triggerCondition, action } = request.body;
        const windowMinutes = impactMetric.windowMinutes ?? TIME_RANGE_MINUTES[impactMetric.timeRange ?? 'hour'];
        return act(request, (uow) =>
          setSafeguard(uow, targetOf(request.params), request.params.planId, {
            metricName: impactMetric.metricName,
            appName: impactMetric.appName ?? null,
            aggregationMode: impactMetric.aggregationMode,
            labelSelectors: impactMetric.labelSelectors ?? {},
            windowMinutes,
            operator: triggerCondition.operator,
            threshold: triggerCondition.threshold,
            rollback: action?.type === 'pauseAndRollback',
          }),
        );
      },
    );
    app.delete(
      `${base}/:planId/safeguards/:safeguardId`,
      route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), { hide, params: SafeguardParams }),
      async (request, reply) => {
        await act(request, (uow) => deleteSafeguard(uow, targetOf(request.params), request.params.planId, request.params.safeguardId));
        return reply.status(200).send();
      },
    );
  }

  const progressionParams = Type.Object({ ...FlagEnvironmentParams.properties, milestoneId: Uuid });
  app.put(
    `${FLAG_ENVIRONMENT}/progressions/:milestoneId`,
    route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), {
      params: progressionParams,
      body: ChangeMilestoneProgressionSchema,
      ok: ReleasePlanSchema,
    }),
    async (request) =>
      act(request, (uow) =>
        setProgression(uow, targetOf(request.params), request.params.milestoneId, {
          targetMilestone: request.body.targetMilestone,
          intervalMinutes: request.body.transitionCondition.intervalMinutes,
        }),
      ),
  );
  app.delete(
    `${FLAG_ENVIRONMENT}/progressions/:milestoneId`,
    route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), { params: progressionParams, ok: ReleasePlanSchema }),
    async (request) => act(request, (uow) => deleteProgression(uow, targetOf(request.params), request.params.milestoneId)),
  );
  app.post(
    `${FLAG_ENVIRONMENT}/progressions/:milestoneId/resume`,
    route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), {
      params: Type.Object({ ...FlagEnvironmentParams.properties, milestoneId: Type.String({ ...Uuid, description: "The plan's id" }) }),
      ok: ReleasePlanSchema,
    }),
    // Unleash names the plan here, in the place its other progression routes name a milestone.
    async (request) => act(request, (uow) => resumePlan(uow, targetOf(request.params), request.params.milestoneId)),
  );

  const metricRoute = routesTagged(['Impact metrics']);
  app.get(
    '/api/admin/impact-metrics',
    metricRoute(can('READ'), {
      querystring: Type.Object({ environment: Type.Optional(UrlFriendlyName) }),
      ok: AvailableImpactMetricsSchema,
    }),
    async (request) => ({ metrics: await availableMetrics(deps.db, request.query.environment) }),
  );
  app.get(
    '/api/admin/impact-metrics/:metricName',
    metricRoute(can('READ'), {
      params: Type.Object({ metricName: Type.String({ minLength: 1, maxLength: 200 }) }),
      querystring: Type.Object({
        environment: UrlFriendlyName,
        appName: Type.Optional(Type.String({ maxLength: 255 })),
        hoursBack: Type.Optional(Type.Integer({ minimum: 1, maximum: 168, default: 1 })),
      }),
      ok: ImpactMetricPointsSchema,
    }),
    async (request) => {
      const { environment, appName, hoursBack = 1 } = request.query;
      const selector = { metricName: request.params.metricName, environment, appName: appName ?? null };
      return {
        metricName: request.params.metricName,
        environment,
        points: await metricSeries(deps.db, selector, hoursBack, deps.clock.now()),
      };
    },
  );
};
