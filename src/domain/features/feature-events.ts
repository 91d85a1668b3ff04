import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent, type EventInput } from '../events/record-event.js';
import { loadFeatureTags } from './feature-views.js';

/** A flag's event: carries its name and project, and the flag's tags at this moment. */
export async function recordFeatureEvent(
  uow: UnitOfWork,
  input: Omit<EventInput, 'tags' | 'featureName' | 'project'> & { featureName: string; project: string },
): Promise<void> {
  const tags = await loadFeatureTags(uow.tx, [input.featureName]);
  await recordEvent(uow, { ...input, tags: tags.get(input.featureName) ?? [] });
}
