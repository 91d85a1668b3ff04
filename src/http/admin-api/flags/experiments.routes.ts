import type { ReadBounds } from '../../../db/bounded-read.js';
import {
  createExperiment,
  type Experiment,
  deleteExperiment,
  type ExperimentInput,
  getExperiment,
  listExperiments,
  shipVariant,
  startExperiment,
  stopExperiment,
  toExperimentView,
  updateExperiment,
} from '../../../domain/experiments/experiments.js';
import {
  createMetric,
  deleteMetric,
  listMetrics,
  type MetricInput,
  unknownTrackedEvents,
  updateMetric,
} from '../../../domain/experiments/metrics.js';
import { snapshotsOf } from '../../../domain/experiments/results.js';
import {
  createDataSource,
  deleteDataSource,
  getDataSource,
  listDataSources,
  testDataSource,
} from '../../../domain/experiments/data-sources.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';
import { ProjectParams } from '../../common.schemas.js';
import { readBoundsOf } from '../../read-bounds.js';
import {
  CreateDataSourceSchema,
  CreateExperimentMetricSchema,
  CreateExperimentSchema,
  DataSourceParams,
  DataSourcesSchema,
  DataSourceSchema,
  DataSourceTestSchema,
  ExperimentMetricSchema,
  ExperimentMetricsSchema,
  ExperimentParams,
  ExperimentResultsHistorySchema,
  ExperimentResultsSchema,
  ExperimentSchema,
  ExperimentsSchema,
  MetricEnvironmentParams,
  MetricParams,
  ResultsQuerySchema,
  ShipVariantSchema,
} from './experiments.schemas.js';

const METRICS = '/api/admin/environments/:environment/experiment-metrics';
const DATA_SOURCES = '/api/admin/experiment-data-sources';
const EXPERIMENTS = '/api/admin/projects/:projectId/experiments';
const EXPERIMENT = `${EXPERIMENTS}/:experimentName`;

const metricInput = (body: typeof CreateExperimentMetricSchema.static): MetricInput => body;
const experimentInput = (body: typeof CreateExperimentSchema.static): ExperimentInput => body;

/** Experiments on flags' variants, the metrics of each environment they measure, and their results. */
export const experimentRoutes: RouteModule = async (app, { deps, act }) => {
  const route = routesTagged(['Experiments']);

  app.get(METRICS, route(can('READ'), { params: MetricEnvironmentParams, ok: ExperimentMetricsSchema }), async (request) => {
    const { environment } = request.params;
    const [metrics, unknownEvents] = await Promise.all([listMetrics(deps.db, environment), unknownTrackedEvents(deps.db, environment)]);
    return { metrics, unknownEvents };
  });
  app.post(
    METRICS,
    route(can('CREATE_EXPERIMENT_METRIC'), {
      params: MetricEnvironmentParams,
      body: CreateExperimentMetricSchema,
      created: ExperimentMetricSchema,
    }),
    async (request, reply) =>
      reply.status(201).send(await act(request, (uow) => createMetric(uow, request.params.environment, metricInput(request.body)))),
  );
  app.put(
    `${METRICS}/:metricName`,
    route(can('UPDATE_EXPERIMENT_METRIC'), { params: MetricParams, body: CreateExperimentMetricSchema, ok: ExperimentMetricSchema }),
    async (request) =>
      act(request, (uow) => updateMetric(uow, request.params.environment, request.params.metricName, metricInput(request.body))),
  );
  app.delete(`${METRICS}/:metricName`, route(can('DELETE_EXPERIMENT_METRIC'), { params: MetricParams }), async (request, reply) => {
    await act(request, (uow) => deleteMetric(uow, request.params.environment, request.params.metricName));
    return reply.status(200).send();
  });

  // Warehouses hold credentials and run SQL elsewhere: Admins only, as integrations are.
  app.get(DATA_SOURCES, route(can('ADMIN'), { ok: DataSourcesSchema }), async () => ({ dataSources: await listDataSources(deps.db) }));
  app.post(DATA_SOURCES, route(can('ADMIN'), { body: CreateDataSourceSchema, created: DataSourceSchema }), async (request, reply) =>
    reply.status(201).send(await act(request, (uow) => createDataSource(uow, request.body, deps.config.integrations.allowPrivateNetworks))),
  );
  app.delete(`${DATA_SOURCES}/:dataSourceName`, route(can('ADMIN'), { params: DataSourceParams }), async (request, reply) => {
    await act(request, (uow) => deleteDataSource(uow, request.params.dataSourceName));
    return reply.status(200).send();
  });
  app.post(
    `${DATA_SOURCES}/:dataSourceName/test`,
    route(can('ADMIN'), { params: DataSourceParams, ok: DataSourceTestSchema }),
    async (request) =>
      testDataSource(await getDataSource(deps.db, request.params.dataSourceName), {
        allowPrivateNetworks: deps.config.integrations.allowPrivateNetworks,
        statementTimeoutMs: deps.config.readTimeoutMs,
      }),
  );

  app.get(EXPERIMENTS, route(can('READ', PROJECT_PARAM), { params: ProjectParams, ok: ExperimentsSchema }), async (request) => ({
    experiments: (await listExperiments(deps.db, request.params.projectId)).map(toExperimentView),
  }));
  app.post(
    EXPERIMENTS,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ProjectParams, body: CreateExperimentSchema, created: ExperimentSchema }),
    async (request, reply) =>
      reply.status(201).send(await act(request, (uow) => createExperiment(uow, request.params.projectId, experimentInput(request.body)))),
  );
  app.get(EXPERIMENT, route(can('READ', PROJECT_PARAM), { params: ExperimentParams, ok: ExperimentSchema }), async (request) =>
    toExperimentView(await getExperiment(deps.db, request.params.projectId, request.params.experimentName)),
  );
  app.put(
    EXPERIMENT,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ExperimentParams, body: CreateExperimentSchema, ok: ExperimentSchema }),
    async (request) =>
      act(request, (uow) => updateExperiment(uow, request.params.projectId, request.params.experimentName, experimentInput(request.body))),
  );
  app.delete(EXPERIMENT, route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ExperimentParams }), async (request, reply) => {
    await act(request, (uow) => deleteExperiment(uow, request.params.projectId, request.params.experimentName));
    return reply.status(200).send();
  });
  app.post(
    `${EXPERIMENT}/start`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ExperimentParams, ok: ExperimentSchema }),
    async (request) => act(request, (uow) => startExperiment(uow, request.params.projectId, request.params.experimentName)),
  );
  app.post(
    `${EXPERIMENT}/stop`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ExperimentParams, ok: ExperimentSchema }),
    async (request) => act(request, (uow) => stopExperiment(uow, request.params.projectId, request.params.experimentName)),
  );
  // Shipping changes the strategy as the strategy route does, so the caller's right to do that is checked there.
  app.post(
    `${EXPERIMENT}/ship`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ExperimentParams, body: ShipVariantSchema, ok: ExperimentSchema }),
    async (request) =>
      act(request, (uow) => shipVariant(uow, request.params.projectId, request.params.experimentName, request.body.variant)),
  );

  // GET: the newest analysis of the phase (computed now, without keeping it, when there is none yet); POST: a new
  // analysis, kept as the phase's newest snapshot.
  for (const [method, analyse] of [
    [
      'GET',
      (experiment: Experiment, phase: number | undefined, bounds: ReadBounds) => deps.experimentAnalyses.latest(experiment, phase, bounds),
    ],
    [
      'POST',
      (experiment: Experiment, phase: number | undefined, bounds: ReadBounds) => deps.experimentAnalyses.refresh(experiment, phase, bounds),
    ],
  ] as const) {
    app.route({
      method,
      url: `${EXPERIMENT}/results`,
      ...route(can('READ', PROJECT_PARAM), { params: ExperimentParams, querystring: ResultsQuerySchema, ok: ExperimentResultsSchema }),
      handler: async (request, reply) => {
        const experiment = await getExperiment(deps.db, request.params.projectId, request.params.experimentName);
        return analyse(experiment, request.query.phase, readBounds(reply));
      },
    });
  }
  app.get(
    `${EXPERIMENT}/results/history`,
    route(can('READ', PROJECT_PARAM), { params: ExperimentParams, querystring: ResultsQuerySchema, ok: ExperimentResultsHistorySchema }),
    async (request) => {
      const experiment = await getExperiment(deps.db, request.params.projectId, request.params.experimentName);
      return { snapshots: await snapshotsOf(deps.db, experiment, request.query.phase) };
    },
  );

  /** An analysis reads much more than an API read does: it has a timeout of its own. */
  function readBounds(reply: Parameters<typeof readBoundsOf>[1]) {
    return { ...readBoundsOf(deps, reply), timeoutMs: deps.config.experiments.analysisTimeoutMs };
  }
};
