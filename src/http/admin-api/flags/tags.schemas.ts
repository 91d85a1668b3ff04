import { Type } from '@sinclair/typebox';
import { Nullable, StrictObject } from '../../common.schemas.js';
import { TagSchema } from '../../features.schemas.js';

/** Tag type names appear in URLs and in `type:value` filters: URL-friendly, 2 to 50 characters, as in Unleash. */
export const TagTypeName = Type.String({
  minLength: 2,
  maxLength: 50,
  pattern: '^(?!\\.{1,2}$)[A-Za-z0-9~_.\\-]+$',
  errorMessage: 'A tag type name is 2 to 50 URL-friendly characters: letters, digits, "-", "_", "." and "~"',
});

const Description = Nullable(Type.String({ maxLength: 1000 }));
const Icon = Nullable(Type.String({ maxLength: 255 }));

/** Unleash uses one schema for a tag type as sent and as shown; stored tag types always carry both fields. */
export const TagTypeSchema = StrictObject(
  { name: TagTypeName, description: Type.Optional(Description), icon: Type.Optional(Icon) },
  { $id: 'tagTypeSchema' },
);

export const TagTypesSchema = Type.Object(
  { version: Type.Literal(1), tagTypes: Type.Array(Type.Ref(TagTypeSchema)) },
  { $id: 'tagTypesSchema' },
);

/** What Unleash's GET /tag-types/:name really answers (its OpenAPI document says `tagTypeSchema`). */
export const TagTypeWithVersionSchema = Type.Object(
  { version: Type.Literal(1), tagType: Type.Ref(TagTypeSchema) },
  { $id: 'tagTypeWithVersionSchema' },
);

export const UpdateTagTypeSchema = StrictObject(
  { description: Type.Optional(Description), icon: Type.Optional(Icon) },
  { $id: 'updateTagTypeSchema' },
);

export const ValidateTagTypeSchema = Type.Object(
  { valid: Type.Boolean(), tagType: Type.Ref(TagTypeSchema) },
  { $id: 'validateTagTypeSchema' },
);

export const TagsSchema = Type.Object({ version: Type.Literal(1), tags: Type.Array(Type.Ref(TagSchema)) }, { $id: 'tagsSchema' });

export const TagWithVersionSchema = Type.Object({ version: Type.Literal(1), tag: Type.Ref(TagSchema) }, { $id: 'tagWithVersionSchema' });

export const UpdateTagsSchema = StrictObject(
  {
    addedTags: Type.Array(Type.Ref(TagSchema), { maxItems: 100 }),
    removedTags: Type.Array(Type.Ref(TagSchema), { maxItems: 100 }),
  },
  { $id: 'updateTagsSchema' },
);

export const TagsBulkAddSchema = StrictObject(
  {
    features: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 1000 }),
    tags: Type.Ref(UpdateTagsSchema),
  },
  { $id: 'tagsBulkAddSchema' },
);

export const tagSchemas = [
  TagTypeSchema,
  TagTypesSchema,
  TagTypeWithVersionSchema,
  UpdateTagTypeSchema,
  ValidateTagTypeSchema,
  TagsSchema,
  TagWithVersionSchema,
  UpdateTagsSchema,
  TagsBulkAddSchema,
];
