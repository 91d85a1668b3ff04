import { expectStatus } from './assertions.js';
import { uniqueName } from './fixtures.js';
import { featurePath, projectPath } from './projects.js';
import type { TestApp } from './test-app.js';

/*
 * An experiment on a flag's first strategy, set up the way a user would through the admin API: its goal metric (a
 * new one, or one the test made), the experiment, and, unless the test wants to start it itself, its start.
 */

export interface ExperimentSetUp {
  project?: string;
  environment?: string;
  /** A metric to create (named uniquely), or the name of one that exists. */
  goal: { kind: 'proportion' | 'mean'; event: string } | string;
  /** Further fields of the experiment's body: engine, dataSource, … */
  settings?: Record<string, unknown>;
  start?: boolean;
}

export interface ExperimentMade {
  name: string;
  goal: string;
  strategyId: string;
  /** The project's experiments path, with this experiment's name. */
  path: string;
}

export async function createExperiment(ctx: TestApp, flag: string, setUp: ExperimentSetUp): Promise<ExperimentMade> {
  const project = setUp.project ?? 'default';
  const environment = setUp.environment ?? 'development';
  const strategies = await ctx.admin.get(`${featurePath(project, flag)}/environments/${environment}/strategies`);
  expectStatus(strategies, 200);
  let goal: string;
  if (typeof setUp.goal === 'string') goal = setUp.goal;
  else {
    goal = uniqueName(setUp.goal.event);
    expectStatus(await ctx.admin.post(`/api/admin/environments/${environment}/experiment-metrics`, { name: goal, ...setUp.goal }), 201);
  }
  const name = uniqueName(`${flag}-exp`);
  const path = `${projectPath(project)}/experiments/${name}`;
  const strategyId = (strategies.json() as Array<{ id: string }>)[0]!.id;
  const made = await ctx.admin.post(`${projectPath(project)}/experiments`, {
    name,
    featureName: flag,
    environment,
    strategyId,
    metrics: [{ metric: goal, role: 'goal' }],
    ...setUp.settings,
  });
  expectStatus(made, 201);
  if (setUp.start !== false) expectStatus(await ctx.admin.post(`${path}/start`), 200);
  return { name, goal, strategyId, path };
}

/** How many units the experiment has recorded exposures of, from any source or one (1 an SDK's, 2 Vexil's own). */
export async function unitsExposed(ctx: TestApp, experiment: string, source?: 1 | 2): Promise<number> {
  let query = ctx.db
    .selectFrom('experiment_exposures as x')
    .innerJoin('experiments as e', 'e.id', 'x.experiment_id')
    .select('x.unit_hash')
    .where('e.name', '=', experiment);
  if (source !== undefined) query = query.where('x.source', '=', source);
  return (await query.execute()).length;
}
