import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent, type EventInput } from '../events/record-event.js';
import { loadFeatureTags } from './feature-views.js';

export type FeatureEventInput = Omit<EventInput, 'tags' | 'featureName' | 'project'> & { featureName: string; project: string };

/** A flag's event: carries its name and project, and the flag's tags at this moment. */
export async function recordFeatureEvent(uow: UnitOfWork, input: FeatureEventInput): Promise<void> {
  await recordFeatureEvents(uow, [input]);
}

/** The events of one change to flags, in order, with the tags of all of them read at once. */
export async function recordFeatureEvents(uow: UnitOfWork, inputs: FeatureEventInput[]): Promise<void> {
  const tags = await loadFeatureTags(uow.tx, [...new Set(inputs.map((input) => input.featureName))]);
  for (const input of inputs) await recordEvent(uow, { ...input, tags: tags.get(input.featureName) ?? [] });
}
