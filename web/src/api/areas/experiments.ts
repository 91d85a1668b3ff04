import { queryOptions } from '@tanstack/react-query';
import { api, ok } from '../client';
import { action, type ExperimentBody, type ExperimentMetricBody, keys } from './common';

interface ExperimentPath {
  projectId: string;
  experimentName: string;
}

const experimentPath = ({ projectId, experimentName }: ExperimentPath) => ({ params: { path: { projectId, experimentName } } });
/** What a change to an experiment makes stale: its project's list and page (its results among them), and the event log. */
const experimentChanged = ({ projectId }: { projectId: string }) => [keys.experiments(projectId), keys.events];

/** Experiments: the metrics of an environment, a project's experiments, their results. */
export const experimentsQueries = {
  experimentMetrics: (environment: string) =>
    queryOptions({
      queryKey: keys.experimentMetrics(environment),
      queryFn: () => ok(api.GET('/api/admin/environments/{environment}/experiment-metrics', { params: { path: { environment } } })),
    }),
  experiments: (projectId: string) =>
    queryOptions({
      queryKey: keys.experiments(projectId),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/experiments', { params: { path: { projectId } } })),
    }),
  experiment: (path: ExperimentPath) =>
    queryOptions({
      queryKey: keys.experiment(path.projectId, path.experimentName),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/experiments/{experimentName}', experimentPath(path))),
    }),
  experimentResults: (path: ExperimentPath) =>
    queryOptions({
      queryKey: keys.experimentResults(path.projectId, path.experimentName),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/experiments/{experimentName}/results', experimentPath(path))),
    }),
  experimentHistory: (path: ExperimentPath) =>
    queryOptions({
      queryKey: [...keys.experimentResults(path.projectId, path.experimentName), 'history'],
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/experiments/{experimentName}/results/history', experimentPath(path))),
    }),
};

export const experimentsActions = {
  createExperimentMetric: action(
    ({ environment, ...body }: ExperimentMetricBody & { environment: string }) =>
      ok(api.POST('/api/admin/environments/{environment}/experiment-metrics', { params: { path: { environment } }, body })),
    ({ environment }) => [keys.experimentMetrics(environment), keys.events],
  ),
  createExperiment: action(
    ({ projectId, ...body }: ExperimentBody & { projectId: string }) =>
      ok(api.POST('/api/admin/projects/{projectId}/experiments', { params: { path: { projectId } }, body })),
    experimentChanged,
  ),
  startExperiment: action(
    (path: ExperimentPath) => ok(api.POST('/api/admin/projects/{projectId}/experiments/{experimentName}/start', experimentPath(path))),
    experimentChanged,
  ),
  stopExperiment: action(
    (path: ExperimentPath) => ok(api.POST('/api/admin/projects/{projectId}/experiments/{experimentName}/stop', experimentPath(path))),
    experimentChanged,
  ),
  shipExperimentVariant: action(
    ({ variant, ...path }: ExperimentPath & { variant: string }) =>
      ok(api.POST('/api/admin/projects/{projectId}/experiments/{experimentName}/ship', { ...experimentPath(path), body: { variant } })),
    (path) => [...experimentChanged(path), keys.flags, keys.featureSearch],
  ),
  refreshExperimentResults: action(
    (path: ExperimentPath) => ok(api.POST('/api/admin/projects/{projectId}/experiments/{experimentName}/results', experimentPath(path))),
    (path) => [keys.experimentResults(path.projectId, path.experimentName)],
  ),
};
