import { Type } from '@sinclair/typebox';
import { PROJECT_MODES } from '../../../domain/projects/projects.js';
import { ENVIRONMENT_TYPES } from '../../../domain/environments/environments.js';
import { DateTime, Nullable, StrictObject, StringEnum, UrlFriendlyName } from '../../common.schemas.js';
import { ConstraintSchema, StrategyVariantSchema } from '../../features.schemas.js';

export const ProjectSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    mode: Type.String(),
    defaultStickiness: Type.String(),
    environments: Type.Array(Type.String(), { description: 'Environments enabled in the project, in display order' }),
    createdAt: DateTime,
    updatedAt: Nullable(DateTime),
  },
  { $id: 'projectSchema' },
);

export const ProjectsSchema = Type.Object(
  { version: Type.Literal(1), projects: Type.Array(Type.Ref(ProjectSchema)) },
  { $id: 'projectsSchema' },
);

const ProjectName = Type.String({ minLength: 1, maxLength: 100 });
const ProjectDescription = Nullable(Type.String({ maxLength: 1000 }));
const ProjectMode = StringEnum(PROJECT_MODES, `mode must be one of ${PROJECT_MODES.join(', ')}`);
const Stickiness = Type.String({ minLength: 1, maxLength: 100 });

export const CreateProjectSchema = StrictObject(
  {
    id: Type.Optional(UrlFriendlyName),
    name: ProjectName,
    description: Type.Optional(ProjectDescription),
    mode: Type.Optional(ProjectMode),
    defaultStickiness: Type.Optional(Stickiness),
    environments: Type.Optional(Type.Array(UrlFriendlyName, { minItems: 1 })),
  },
  { $id: 'createProjectSchema' },
);

export const UpdateProjectSchema = StrictObject(
  {
    id: Type.Optional(UrlFriendlyName),
    name: ProjectName,
    description: Type.Optional(ProjectDescription),
    mode: Type.Optional(ProjectMode),
    defaultStickiness: Type.Optional(Stickiness),
  },
  { $id: 'updateProjectSchema' },
);

export const ProjectEnvironmentSchema = StrictObject({ environment: UrlFriendlyName }, { $id: 'projectEnvironmentSchema' });

export const EnvironmentSchema = Type.Object(
  {
    name: Type.String(),
    type: Type.String(),
    enabled: Type.Boolean(),
    sortOrder: Type.Integer(),
    projectCount: Type.Integer(),
    apiTokenCount: Type.Integer(),
  },
  { $id: 'environmentSchema' },
);

export const EnvironmentsSchema = Type.Object(
  { version: Type.Literal(1), environments: Type.Array(Type.Ref(EnvironmentSchema)) },
  { $id: 'environmentsSchema' },
);

/** A project's default strategy in an environment, as stored: groupId '' stands for each flag's name. */
export const ProjectDefaultStrategySchema = Type.Object(
  {
    name: Type.String(),
    title: Type.String(),
    disabled: Type.Boolean(),
    constraints: Type.Array(Type.Ref(ConstraintSchema)),
    variants: Type.Array(Type.Ref(StrategyVariantSchema)),
    parameters: Type.Record(Type.String(), Type.String()),
    segments: Type.Array(Type.Integer()),
  },
  { $id: 'projectDefaultStrategySchema' },
);

export const ProjectEnvironmentViewSchema = Type.Object(
  {
    name: Type.String(),
    type: Type.String(),
    enabled: Type.Boolean(),
    protected: Type.Boolean(),
    sortOrder: Type.Integer(),
    projectApiTokenCount: Type.Integer({ minimum: 0 }),
    projectEnabledToggleCount: Type.Integer({ minimum: 0 }),
    defaultStrategy: Type.Optional(Type.Ref(ProjectDefaultStrategySchema)),
    visible: Type.Boolean(),
  },
  { $id: 'environmentProjectSchema' },
);

export const ProjectEnvironmentsSchema = Type.Object(
  { version: Type.Literal(1), environments: Type.Array(Type.Ref(ProjectEnvironmentViewSchema)) },
  { $id: 'environmentsProjectSchema' },
);

const EnvironmentType = StringEnum(ENVIRONMENT_TYPES, `type must be one of ${ENVIRONMENT_TYPES.join(', ')}`);
const SortOrder = Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 });

export const CreateEnvironmentSchema = StrictObject(
  { name: UrlFriendlyName, type: EnvironmentType, enabled: Type.Optional(Type.Boolean()), sortOrder: Type.Optional(SortOrder) },
  { $id: 'createEnvironmentSchema' },
);

export const UpdateEnvironmentSchema = StrictObject(
  { type: Type.Optional(EnvironmentType), sortOrder: Type.Optional(SortOrder) },
  { $id: 'updateEnvironmentSchema' },
);

export const EnvironmentSortOrderSchema = Type.Record(UrlFriendlyName, SortOrder, {
  additionalProperties: false,
  $id: 'sortOrderSchema',
  maxProperties: 1000,
  description: "Environments' new sort orders, by environment name",
});

export const projectSchemas = [
  ProjectSchema,
  ProjectsSchema,
  CreateProjectSchema,
  UpdateProjectSchema,
  ProjectEnvironmentSchema,
  EnvironmentSchema,
  EnvironmentsSchema,
  CreateEnvironmentSchema,
  UpdateEnvironmentSchema,
  EnvironmentSortOrderSchema,
  ProjectDefaultStrategySchema,
  ProjectEnvironmentViewSchema,
  ProjectEnvironmentsSchema,
];
