import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../common.schemas.js';
import { TagSchema } from '../../features.schemas.js';

const SearchEnvironmentSchema = Type.Object({
  name: Type.String(),
  environment: Type.String(),
  type: Type.String(),
  enabled: Type.Boolean(),
  sortOrder: Type.Integer(),
  variantCount: Type.Integer(),
  hasStrategies: Type.Boolean(),
  hasEnabledStrategies: Type.Boolean(),
  lastSeenAt: Nullable(DateTime),
  yes: Type.Integer(),
  no: Type.Integer(),
  changeRequestIds: Type.Array(Type.Integer(), { description: 'Open change requests changing the flag in this environment' }),
});

export const FeatureSearchResultSchema = Type.Object(
  {
    name: Type.String(),
    type: Type.String(),
    description: Nullable(Type.String()),
    dependencyType: Nullable(Type.Union([Type.Literal('parent'), Type.Literal('child')])),
    archived: Type.Boolean(),
    project: Type.String(),
    stale: Type.Boolean(),
    favorite: Type.Boolean(),
    impressionData: Type.Boolean(),
    createdAt: DateTime,
    archivedAt: Nullable(DateTime),
    lastSeenAt: Nullable(DateTime),
    environments: Type.Array(SearchEnvironmentSchema),
    segments: Type.Array(Type.String()),
    tags: Type.Array(Type.Ref(TagSchema)),
    lifecycle: Nullable(Type.Object({ stage: Type.String(), status: Nullable(Type.String()), enteredStageAt: DateTime })),
    createdBy: Type.Object({ id: Type.Integer(), name: Type.String(), imageUrl: Type.String() }),
  },
  { $id: 'featureSearchResultSchema' },
);

export const SearchFeaturesResponseSchema = Type.Object(
  { features: Type.Array(Type.Ref(FeatureSearchResultSchema)), total: Type.Integer() },
  { $id: 'searchFeaturesSchema' },
);

const Parameter = (description: string) => Type.Optional(Type.String({ description }));

export const SearchFeaturesQuerySchema = Type.Object({
  query: Parameter('Case-insensitive substring of the name, description or a tag value; comma-separated terms match any'),
  project: Parameter('IS, IS_NOT, IS_ANY_OF, IS_NONE_OF:<project>[,<project>]'),
  state: Parameter('IS, IS_NOT, IS_ANY_OF, IS_NONE_OF:active|stale|potentially-stale'),
  type: Parameter('IS, IS_NOT, IS_ANY_OF, IS_NONE_OF:<flag type>'),
  createdBy: Parameter('IS, IS_NOT, IS_ANY_OF, IS_NONE_OF:<user id>'),
  tag: Parameter('INCLUDE, DO_NOT_INCLUDE, INCLUDE_ALL_OF, INCLUDE_ANY_OF, EXCLUDE_IF_ANY_OF, EXCLUDE_ALL:<type>:<value>[,...]'),
  segment: Parameter('INCLUDE, DO_NOT_INCLUDE, INCLUDE_ALL_OF, INCLUDE_ANY_OF, EXCLUDE_IF_ANY_OF, EXCLUDE_ALL:<segment name>[,...]'),
  status: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: 100,
      description: 'Repeatable (at most 100 times) <environment>:enabled|disabled; entries are OR-ed',
    }),
  ),
  createdAt: Parameter('IS_BEFORE or IS_ON_OR_AFTER:yyyy-MM-dd'),
  lifecycle: Parameter('IS, IS_NOT, IS_ANY_OF, IS_NONE_OF:initial|pre-live|live|completed|archived'),
  health: Parameter(
    'IS, IS_NOT, IS_ANY_OF, IS_NONE_OF:potentially-stale|never-seen|unused-in-production|ready-to-remove (flags that need attention)',
  ),
  favorite: Parameter('IS or IS_NOT:true|false, for the caller'),
  codeReferences: Parameter('IS or IS_NOT:true|false: whether a pushed repository reads the flag (vexil refs push)'),
  removalReadiness: Parameter(
    'IS, IS_NOT, IS_ANY_OF, IS_NONE_OF:keep|ready-to-remove|ready-to-remove-keep-on|ready-to-remove-keep-off|ready-to-archive, as last judged (hourly) in any production environment',
  ),
  archived: Parameter('IS or IS_NOT:true|false; archived flags are left out unless asked for'),
  sortBy: Parameter('createdAt (default), name, type, project, stale, lastSeenAt or environment:<name>'),
  sortOrder: Parameter('asc (default) or desc'),
  favoritesFirst: Parameter('true puts the caller’s favorites first'),
  offset: Parameter('Flags to skip; default 0'),
  limit: Parameter('Page size, 1 to 1000; default 50'),
});

export const featureSearchSchemas = [FeatureSearchResultSchema, SearchFeaturesResponseSchema];
