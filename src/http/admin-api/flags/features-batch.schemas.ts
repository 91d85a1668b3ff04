import { Type } from '@sinclair/typebox';
import { MAX_LEGAL_VALUES } from '../../../domain/context-fields/context-fields.js';
import { MAX_FILE_FLAGS } from '../../../domain/flags-file/apply-flags-file.js';
import { Nullable, StrictObject, UrlFriendlyName } from '../../common.schemas.js';
import { LegalValueSchema } from './context-fields.schemas.js';
import { ConstraintSchema, StrategyVariantSchema, VariantSchema } from '../../features.schemas.js';

/**
 * Unleash's export and import format. Entries written by Unleash carry fields of its own that mean nothing to an
 * import (`createdAt`, `lastSeenAt`, `usedInFeatures`…): the entries accept them and ignore them, while the
 * document and the parts that decide evaluation (constraints, variants) refuse anything unknown.
 */
const Entry = { additionalProperties: true } as const;
const Description = Type.Optional(Nullable(Type.String({ maxLength: 2000 })));
const MAX_STRATEGIES = 50_000;

export const ExportQuerySchema = StrictObject(
  {
    environment: UrlFriendlyName,
    features: Type.Optional(Type.Array(UrlFriendlyName, { maxItems: MAX_FILE_FLAGS, description: 'By name; all when empty' })),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 101, description: 'Flags with this tag value (or type:value)' })),
    project: Type.Optional(UrlFriendlyName),
    downloadFile: Type.Optional(Type.Boolean({ description: 'Answer as a file to save' })),
  },
  { $id: 'exportQuerySchema' },
);

export const ExportResultSchema = StrictObject(
  {
    features: Type.Array(
      Type.Object(
        {
          name: UrlFriendlyName,
          type: Type.Optional(Type.String({ maxLength: 100 })),
          description: Description,
          project: Type.Optional(Type.String({ maxLength: 100 })),
          stale: Type.Optional(Type.Boolean()),
          impressionData: Type.Optional(Type.Boolean()),
          archived: Type.Optional(Type.Boolean()),
        },
        Entry,
      ),
      { maxItems: MAX_FILE_FLAGS },
    ),
    featureStrategies: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 100 }),
          id: Type.Optional(Type.String({ maxLength: 100 })),
          featureName: Type.Optional(UrlFriendlyName),
          title: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
          disabled: Type.Optional(Nullable(Type.Boolean())),
          sortOrder: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
          parameters: Type.Optional(
            Type.Record(Type.String({ maxLength: 100 }), Type.Union([Type.String({ maxLength: 10_000 }), Type.Number()]), {
              maxProperties: 50,
            }),
          ),
          constraints: Type.Optional(Type.Array(Type.Ref(ConstraintSchema), { maxItems: 100 })),
          variants: Type.Optional(Type.Array(Type.Ref(StrategyVariantSchema), { maxItems: 100 })),
          segments: Type.Optional(Type.Array(Type.Integer(), { maxItems: 100 })),
        },
        Entry,
      ),
      { maxItems: MAX_STRATEGIES },
    ),
    featureEnvironments: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: UrlFriendlyName,
            featureName: Type.Optional(UrlFriendlyName),
            environment: Type.Optional(Type.String({ maxLength: 100 })),
            enabled: Type.Boolean(),
            variants: Type.Optional(Type.Array(Type.Ref(VariantSchema), { maxItems: 100 })),
          },
          Entry,
        ),
        { maxItems: MAX_FILE_FLAGS },
      ),
    ),
    contextFields: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: UrlFriendlyName,
            description: Description,
            stickiness: Type.Optional(Type.Boolean()),
            sortOrder: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
            legalValues: Type.Optional(Type.Array(Type.Ref(LegalValueSchema), { maxItems: MAX_LEGAL_VALUES })),
          },
          Entry,
        ),
        { maxItems: 500 },
      ),
    ),
    featureTags: Type.Optional(
      Type.Array(
        Type.Object(
          {
            featureName: UrlFriendlyName,
            tagType: Type.Optional(Type.String({ minLength: 2, maxLength: 50 })),
            tagValue: Type.String({ minLength: 2, maxLength: 50 }),
          },
          Entry,
        ),
        { maxItems: MAX_FILE_FLAGS * 10 },
      ),
    ),
    segments: Type.Optional(
      Type.Array(StrictObject({ id: Type.Integer(), name: Type.String({ minLength: 1, maxLength: 255 }) }), { maxItems: 1000 }),
    ),
    tagTypes: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 2, maxLength: 50 }),
          description: Description,
          icon: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
        },
        Entry,
      ),
      { maxItems: 500 },
    ),
    dependencies: Type.Optional(
      Type.Array(
        StrictObject({
          feature: UrlFriendlyName,
          dependencies: Type.Array(
            StrictObject({
              feature: UrlFriendlyName,
              enabled: Type.Optional(Type.Boolean()),
              variants: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
            }),
            { maxItems: 1, description: 'One parent per flag' },
          ),
        }),
        { maxItems: MAX_FILE_FLAGS },
      ),
    ),
    links: Type.Optional(
      Type.Array(
        Type.Object(
          {
            feature: UrlFriendlyName,
            links: Type.Array(
              Type.Object(
                { url: Type.String({ maxLength: 2000 }), title: Type.Optional(Nullable(Type.String({ maxLength: 200 }))) },
                Entry,
              ),
              {
                maxItems: 100,
              },
            ),
          },
          Entry,
        ),
        { maxItems: MAX_FILE_FLAGS, description: 'Read and reported, not kept: Vexil has no feature links' },
      ),
    ),
  },
  { $id: 'exportResultSchema' },
);

export const ImportTogglesSchema = StrictObject(
  {
    project: UrlFriendlyName,
    environment: UrlFriendlyName,
    data: Type.Ref(ExportResultSchema),
  },
  { $id: 'importTogglesSchema' },
);

const ValidationItems = Type.Array(Type.Object({ message: Type.String(), affectedItems: Type.Array(Type.String()) }));

export const ImportTogglesValidateSchema = Type.Object(
  { errors: ValidationItems, warnings: ValidationItems, permissions: ValidationItems },
  { $id: 'importTogglesValidateSchema' },
);

export const featuresBatchSchemas = [ExportQuerySchema, ExportResultSchema, ImportTogglesSchema, ImportTogglesValidateSchema];
