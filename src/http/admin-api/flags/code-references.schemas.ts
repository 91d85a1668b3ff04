import { Type } from '@sinclair/typebox';
import { StrictObject } from '../../common.schemas.js';

/** At most this many references in one push: a large monorepo has a few thousand. */
export const MAX_PUSHED_REFERENCES = 50_000;

const Text = (maxLength: number, what: string) =>
  Type.String({ minLength: 1, maxLength, errorMessage: `${what} is text of 1 to ${maxLength} characters` });

const PushedReferenceSchema = StrictObject({
  flag: Text(255, 'flag'),
  file: Text(1000, 'file'),
  line: Type.Integer({ minimum: 1, maximum: 10_000_000, errorMessage: 'line is a whole number from 1' }),
  column: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, errorMessage: 'column is a whole number from 1' })),
  language: Text(40, 'language'),
  call: Text(200, 'call'),
  expression: Text(500, 'expression'),
  context: Type.Optional(
    Type.Array(Type.String({ maxLength: 500, errorMessage: 'each context line is at most 500 characters' }), {
      maxItems: 11,
      errorMessage: 'context is at most 11 lines',
    }),
  ),
});

export const CodeReferencePushSchema = StrictObject(
  {
    repository: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^(?!.*\\.\\.)[A-Za-z0-9._~/@:+-]+$',
      errorMessage: 'repository is a name of 1 to 255 letters, digits and . _ ~ / @ : + - (no ..), such as acme/shop',
    }),
    branch: Text(255, 'branch'),
    commit: Type.String({ pattern: '^[0-9a-fA-F]{7,64}$', errorMessage: 'commit is a commit hash: 7 to 64 hexadecimal digits' }),
    urlTemplate: Type.Optional(Text(1000, 'urlTemplate')),
    references: Type.Array(PushedReferenceSchema, {
      maxItems: MAX_PUSHED_REFERENCES,
      errorMessage: `references is a list of at most ${MAX_PUSHED_REFERENCES} references`,
    }),
  },
  { $id: 'codeReferencePushSchema' },
);

export const CodeReferencePushSummarySchema = Type.Object(
  {
    repository: Type.String(),
    branch: Type.String(),
    commit: Type.String(),
    changed: Type.Boolean({ description: 'False when this commit was already the one held' }),
    references: Type.Integer(),
    flags: Type.Integer(),
    unknownFlags: Type.Array(Type.String(), { description: 'Names referenced in code that are no flag' }),
    removedFlags: Type.Array(Type.String(), { description: 'Flags the branch referenced before and no longer does' }),
  },
  { $id: 'codeReferencePushSummarySchema' },
);

export const FlagCodeReferencesSchema = Type.Object(
  {
    references: Type.Array(
      Type.Object({
        repository: Type.String(),
        branch: Type.String(),
        commit: Type.String(),
        file: Type.String(),
        line: Type.Integer(),
        column: Type.Integer(),
        language: Type.String(),
        call: Type.String(),
        expression: Type.String(),
        context: Type.Array(Type.String()),
        url: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
    total: Type.Integer(),
    removedFromCode: Type.Union([
      Type.Object({
        repository: Type.String(),
        branch: Type.String(),
        commit: Type.String(),
        removedAt: Type.String({ format: 'date-time' }),
      }),
      Type.Null(),
    ]),
  },
  { $id: 'flagCodeReferencesSchema' },
);

export const RemovalReadinessSchema = Type.Object(
  {
    flag: Type.String(),
    project: Type.String(),
    environments: Type.Array(
      Type.Object({
        environment: Type.String(),
        verdict: Type.Union(
          ['keep', 'ready to remove (keep the on branch)', 'ready to remove (keep the off branch)', 'ready to archive'].map((verdict) =>
            Type.Literal(verdict),
          ),
        ),
        reasons: Type.Array(Type.String()),
      }),
      { description: 'One per production environment of the flag’s project' },
    ),
    settledBranch: Type.Union([Type.Literal('on'), Type.Literal('off'), Type.Null()], {
      description: 'The branch every production environment is ready to keep (what `vexil refs cleanup --keep` takes), or null',
    }),
  },
  { $id: 'removalReadinessSchema' },
);

export const codeReferenceSchemas = [
  CodeReferencePushSchema,
  CodeReferencePushSummarySchema,
  FlagCodeReferencesSchema,
  RemovalReadinessSchema,
];
