import type { Constraint, StrategyVariant, Variant } from '../features/feature-views.js';
import type { FeatureType } from '../features/feature-types.js';
import type { ProjectMode } from '../projects/projects.js';
import type { EnvironmentType } from '../environments/environments.js';
import type { LegalValue } from '../context-fields/context-fields.js';
import type { ParameterInput } from '../strategies/strategy-definitions.js';

/**
 * The flags file: Vexil's configuration as a document, kept in a repository and applied from CI (`apply`),
 * written by `export`, and what imports from Unleash are turned into. It names segments by name, never by id,
 * so that one file applies to any instance. What a file does not list is left alone; within a flag, an
 * environment the file lists is made to match it, and a list the file leaves out (`strategies`, `variants`)
 * is left as it is.
 */
export interface FlagsFile {
  version: 1;
  environments?: FileEnvironment[];
  contextFields?: FileContextField[];
  tagTypes?: FileTagType[];
  strategies?: FileStrategyDefinition[];
  segments?: FileSegment[];
  projects?: FileProject[];
}

export interface FileEnvironment {
  name: string;
  type: EnvironmentType;
  enabled?: boolean;
  sortOrder?: number;
}

export interface FileContextField {
  name: string;
  description?: string | null;
  stickiness?: boolean;
  sortOrder?: number;
  legalValues?: LegalValue[];
  /** The project the field belongs to; none: the instance's. */
  project?: string | null;
}

export interface FileTagType {
  name: string;
  description?: string | null;
  icon?: string | null;
}

export interface FileStrategyDefinition {
  name: string;
  title?: string | null;
  description?: string | null;
  parameters?: ParameterInput[];
}

export interface FileSegment {
  name: string;
  description?: string | null;
  project?: string | null;
  constraints: Constraint[];
}

export interface FileProject {
  id: string;
  name?: string;
  description?: string | null;
  mode?: ProjectMode;
  /** Environments the project uses; added when missing, never removed. */
  environments?: string[];
  /** Per environment: the flexible rollout a flag turned on there without strategies gets; others left alone. */
  defaultStrategies?: Record<string, FileStrategy>;
  flags?: FileFlag[];
}

export interface FileFlag {
  name: string;
  type?: FeatureType;
  description?: string | null;
  impressionData?: boolean;
  stale?: boolean;
  archived?: boolean;
  tags?: Array<{ type: string; value: string }>;
  /** The flag's links, in order; left alone when absent. */
  links?: Array<{ url: string; title?: string | null }>;
  dependencies?: Array<{ feature: string; enabled?: boolean; variants?: string[] }>;
  environments?: Record<string, FileFlagEnvironment>;
}

export interface FileFlagEnvironment {
  enabled?: boolean;
  strategies?: FileStrategy[];
  variants?: Variant[];
}

export interface FileStrategy {
  name: string;
  title?: string | null;
  disabled?: boolean;
  parameters?: Record<string, string | number>;
  constraints?: Constraint[];
  /** Segment names. */
  segments?: string[];
  variants?: Array<Omit<StrategyVariant, 'weightType' | 'stickiness'> & Partial<Pick<StrategyVariant, 'weightType' | 'stickiness'>>>;
}

/** Where an entry sits in the document, as a JSON pointer: how errors name it and the CLI finds its line. */
export const pointer = (...segments: Array<string | number>) =>
  segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
