import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ClientFeature, ClientSegment } from '../../src/domain/client-features/environment-configuration.js';
import type { FlagConfiguration } from '../../src/domain/evaluation/engine.js';

/**
 * The official Unleash client specification (`@unleash/client-specification`), as its files are: a state of flags
 * and segments (or the delta events that build one) and the answers every SDK must give for given contexts.
 */
export interface SpecificationTest {
  description: string;
  context: Record<string, unknown>;
  toggleName: string;
  expectedResult: boolean;
}

export interface SpecificationVariantTest {
  description: string;
  context: Record<string, unknown>;
  toggleName: string;
  expectedResult: { name: string; enabled: boolean; payload?: { type: string; value: string }; feature_enabled?: boolean };
}

type DeltaEvent =
  | { type: 'hydration'; features: ClientFeature[]; segments: ClientSegment[] }
  | { type: 'feature-updated'; feature: ClientFeature }
  | { type: 'feature-removed'; featureName: string }
  | { type: 'segment-updated'; segment: ClientSegment }
  | { type: 'segment-removed'; segmentId: number };

export interface Specification {
  name: string;
  state: { features?: ClientFeature[]; segments?: ClientSegment[]; events?: DeltaEvent[] };
  tests?: SpecificationTest[];
  variantTests?: SpecificationVariantTest[];
}

const directory = join(dirname(createRequire(import.meta.url).resolve('@unleash/client-specification/package.json')), 'specifications');

/** Every specification file, in the order of the specification's index. */
export function specifications(): Specification[] {
  const index = JSON.parse(readFileSync(join(directory, 'index.json'), 'utf8')) as string[];
  return index.map((file) => JSON.parse(readFileSync(join(directory, file), 'utf8')) as Specification);
}

/** The flags and segments a specification's state describes, with delta events applied in order. */
export function configurationOf(specification: Specification): FlagConfiguration {
  const features = new Map<string, ClientFeature>();
  const segments = new Map<number, ClientSegment>();
  for (const feature of specification.state.features ?? []) features.set(feature.name, feature);
  for (const segment of specification.state.segments ?? []) segments.set(segment.id, segment);
  for (const event of specification.state.events ?? []) {
    if (event.type === 'hydration') {
      features.clear();
      segments.clear();
      for (const feature of event.features) features.set(feature.name, feature);
      for (const segment of event.segments) segments.set(segment.id, segment);
    } else if (event.type === 'feature-updated') features.set(event.feature.name, event.feature);
    else if (event.type === 'feature-removed') features.delete(event.featureName);
    else if (event.type === 'segment-updated') segments.set(event.segment.id, event.segment);
    else segments.delete(event.segmentId);
  }
  return { features: [...features.values()], segments };
}
