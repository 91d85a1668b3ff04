import { Type, type TSchema } from '@sinclair/typebox';
import { MAX_LEGAL_VALUES } from '../../../domain/context-fields/context-fields.js';
import { ENVIRONMENT_TYPES } from '../../../domain/environments/environments.js';
import { MAX_FILE_FLAGS } from '../../../domain/flags-file/apply-flags-file.js';
import { FEATURE_TYPES } from '../../../domain/features/feature-types.js';
import { MAX_LINKS_PER_FLAG } from '../../../domain/features/feature-links.js';
import { PROJECT_MODES } from '../../../domain/projects/projects.js';
import { PARAMETER_TYPES } from '../../../domain/strategies/strategy-definitions.js';
import { Nullable, StrictObject, StringEnum, UrlFriendlyName } from '../../common.schemas.js';
import { LegalValueSchema } from './context-fields.schemas.js';
import { ConstraintSchema, StrategyVariantSchema, TagSchema, VariantSchema } from '../../features.schemas.js';

/** A shared schema embedded whole, so the flags file's schema stands alone when published. */
function embedded<T extends TSchema>(schema: T): T {
  const { $id: _id, ...rest } = schema;
  return rest as T;
}

const Description = Type.Optional(Nullable(Type.String({ maxLength: 1000 })));
const Constraints = Type.Array(embedded(ConstraintSchema), { maxItems: 100 });

const FileStrategy = StrictObject({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  title: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  disabled: Type.Optional(Type.Boolean()),
  parameters: Type.Optional(
    Type.Record(Type.String({ maxLength: 100 }), Type.Union([Type.String({ maxLength: 10_000 }), Type.Number()]), {
      maxProperties: 50,
      errorMessage: 'parameters maps names to strings',
    }),
  ),
  constraints: Type.Optional(Constraints),
  segments: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100, description: 'Segment names' })),
  variants: Type.Optional(Type.Array(embedded(StrategyVariantSchema), { maxItems: 100 })),
});

const FileFlagEnvironment = StrictObject({
  enabled: Type.Optional(Type.Boolean()),
  strategies: Type.Optional(Type.Array(FileStrategy, { maxItems: 100, description: 'In evaluation order; left alone when absent' })),
  variants: Type.Optional(Type.Array(embedded(VariantSchema), { maxItems: 100, description: 'Left alone when absent' })),
});

const FileFlag = StrictObject({
  name: UrlFriendlyName,
  type: Type.Optional(StringEnum(FEATURE_TYPES, `type must be one of ${FEATURE_TYPES.join(', ')}`)),
  description: Description,
  impressionData: Type.Optional(Type.Boolean()),
  stale: Type.Optional(Type.Boolean()),
  archived: Type.Optional(Type.Boolean()),
  tags: Type.Optional(Type.Array(embedded(TagSchema), { maxItems: 100 })),
  links: Type.Optional(
    Type.Array(
      StrictObject({
        url: Type.String({ minLength: 1, maxLength: 2000 }),
        title: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
      }),
      {
        maxItems: MAX_LINKS_PER_FLAG,
        description: "The flag's links, in order; left alone when absent",
      },
    ),
  ),
  dependencies: Type.Optional(
    Type.Array(
      StrictObject({
        feature: UrlFriendlyName,
        enabled: Type.Optional(Type.Boolean()),
        variants: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
      }),
      { maxItems: 1, description: 'Unleash allows one parent per flag' },
    ),
  ),
  environments: Type.Optional(
    Type.Record(UrlFriendlyName, FileFlagEnvironment, { maxProperties: 50, description: 'Per environment name' }),
  ),
});

export const FlagsFileSchema = StrictObject(
  {
    version: Type.Literal(1, { errorMessage: 'version must be 1' }),
    environments: Type.Optional(
      Type.Array(
        StrictObject({
          name: UrlFriendlyName,
          type: StringEnum(ENVIRONMENT_TYPES, `type must be one of ${ENVIRONMENT_TYPES.join(', ')}`),
          enabled: Type.Optional(Type.Boolean()),
          sortOrder: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
        }),
        { maxItems: 100 },
      ),
    ),
    contextFields: Type.Optional(
      Type.Array(
        StrictObject({
          name: UrlFriendlyName,
          description: Description,
          stickiness: Type.Optional(Type.Boolean()),
          sortOrder: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
          legalValues: Type.Optional(Type.Array(embedded(LegalValueSchema), { maxItems: MAX_LEGAL_VALUES })),
          project: Type.Optional(Nullable(UrlFriendlyName)),
        }),
        { maxItems: 500 },
      ),
    ),
    tagTypes: Type.Optional(
      Type.Array(
        StrictObject({
          name: Type.String({ minLength: 2, maxLength: 50 }),
          description: Description,
          icon: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
        }),
        { maxItems: 500 },
      ),
    ),
    strategies: Type.Optional(
      Type.Array(
        StrictObject({
          name: UrlFriendlyName,
          title: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
          description: Description,
          parameters: Type.Optional(
            Type.Array(
              StrictObject({
                name: Type.String({ minLength: 1, maxLength: 100 }),
                type: StringEnum(PARAMETER_TYPES, `type must be one of ${PARAMETER_TYPES.join(', ')}`),
                description: Type.Optional(Type.String({ maxLength: 1000 })),
                required: Type.Optional(Type.Boolean()),
              }),
              { maxItems: 50 },
            ),
          ),
        }),
        { maxItems: 200, description: 'Custom strategy definitions' },
      ),
    ),
    segments: Type.Optional(
      Type.Array(
        StrictObject({
          name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }),
          description: Description,
          project: Type.Optional(Nullable(UrlFriendlyName)),
          constraints: Constraints,
        }),
        { maxItems: 1000 },
      ),
    ),
    projects: Type.Optional(
      Type.Array(
        StrictObject({
          id: UrlFriendlyName,
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          description: Description,
          mode: Type.Optional(StringEnum(PROJECT_MODES, `mode must be one of ${PROJECT_MODES.join(', ')}`)),
          environments: Type.Optional(Type.Array(UrlFriendlyName, { minItems: 1, maxItems: 50 })),
          defaultStrategies: Type.Optional(
            Type.Record(UrlFriendlyName, FileStrategy, {
              maxProperties: 50,
              description: 'Per environment: the flexible rollout a flag turned on there without strategies gets',
            }),
          ),
          flags: Type.Optional(Type.Array(FileFlag, { maxItems: MAX_FILE_FLAGS })),
        }),
        { maxItems: 200 },
      ),
    ),
  },
  {
    $id: 'flagsFileSchema',
    title: 'Vexil flags file',
    description: 'Projects, environments, segments, context fields and flags with their strategies per environment',
  },
);

export const ApplyReportSchema = Type.Object(
  {
    dryRun: Type.Boolean(),
    changes: Type.Array(
      Type.Object({
        path: Type.String(),
        change: Type.String(),
        target: Type.String(),
        detail: Type.Optional(Type.String()),
      }),
    ),
    changeRequests: Type.Array(
      Type.Object({
        project: Type.String(),
        environment: Type.String(),
        id: Nullable(Type.Integer({ description: 'null in a dry run for a change request it would open' })),
        created: Type.Boolean({ description: 'Opened by this apply' }),
      }),
    ),
  },
  { $id: 'applyReportSchema' },
);

export const flagsFileSchemas = [FlagsFileSchema, ApplyReportSchema];
