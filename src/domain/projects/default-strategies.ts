import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';
import { assertProject, assertProjectEnvironment } from '../features/feature-lookup.js';
import type { ProjectDefaultStrategy } from '../features/project-environments.js';
import { resolveStrategy, type StrategyInput } from '../features/strategies.js';
import { guardDirectChange } from '../protected-environments/guard.js';

/**
 * Sets the project's default strategy in one of its environments, as Unleash does: a flexible rollout only, checked as
 * a flag's strategy would be; `default-strategy-updated` records it. A protected environment's guard decides, as for
 * other changes of a project's environment.
 */
export async function setProjectDefaultStrategy(
  uow: UnitOfWork,
  target: { project: string; environment: string },
  input: StrategyInput,
): Promise<ProjectDefaultStrategy> {
  await assertProject(uow.tx, target.project);
  await assertProjectEnvironment(uow.tx, target.project, target.environment);
  if (input.name !== 'flexibleRollout') {
    throw new BadDataError('Only "flexibleRollout" strategy can be used as a default strategy for an environment', [
      { path: '/body/name', message: `A default strategy is a flexibleRollout (got "${input.name}")` },
    ]);
  }
  const { sortOrder: _sortOrder, ...strategy } = input;
  // groupId '' stands for each flag's own name; the rest is checked as a flag's strategy is.
  const normalized = await resolveStrategy(uow.tx, { ...strategy, parameters: { groupId: '', ...strategy.parameters } }, '');
  if (normalized.segments.length > 0) {
    const existing = await uow.tx.selectFrom('segments').select('id').where('id', 'in', normalized.segments).execute();
    const missing = normalized.segments.filter((id) => !existing.some((segment) => segment.id === id));
    if (missing.length > 0) {
      throw new BadDataError('The default strategy uses segments that do not exist', [
        { path: '/body/segments', message: `No segment has the id ${missing.join(', ')}` },
      ]);
    }
  }
  await guardDirectChange(uow, { kind: 'project-environment', project: target.project, environment: target.environment });
  const before = await uow.tx
    .selectFrom('project_environments')
    .select('default_strategy')
    .where('project_id', '=', target.project)
    .where('environment_name', '=', target.environment)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const stored: ProjectDefaultStrategy = { ...normalized, title: normalized.title ?? '' };
  await uow.tx
    .updateTable('project_environments')
    .set({ default_strategy: JSON.stringify(stored) })
    .where('project_id', '=', target.project)
    .where('environment_name', '=', target.environment)
    .execute();
  await recordEvent(uow, {
    type: 'default-strategy-updated',
    project: target.project,
    environment: target.environment,
    data: stored,
    preData: before.default_strategy ?? null,
  });
  return stored;
}
