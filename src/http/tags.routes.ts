import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { addFeatureTag, removeFeatureTag, updateFeatureTags } from '../domain/tags/feature-tags.commands.js';
import { createTagType, deleteTagType, updateTagType } from '../domain/tags/tag-types.commands.js';
import { assertTagTypeNameFree, findTagType, getTag, listFeatureTags, listTags, listTagTypes } from '../domain/tags/tags.queries.js';
import { UrlFriendlyName } from './common.schemas.js';
import type { RouteModule } from './deps.js';
import { TagSchema } from './features.schemas.js';
import { actorOf, can, FLAG_PARAM } from './plugins/access.js';
import {
  TagsSchema,
  TagTypeName,
  TagTypeSchema,
  TagTypesSchema,
  TagTypeWithVersionSchema,
  TagWithVersionSchema,
  UpdateTagsSchema,
  UpdateTagTypeSchema,
  ValidateTagTypeSchema,
} from './tags.schemas.js';

const TagTypeParams = Type.Object({ name: TagTypeName });
const TagParams = Type.Object({ type: TagTypeName, value: Type.String({ minLength: 1, maxLength: 100 }) });
const FeatureParams = Type.Object({ featureName: UrlFriendlyName });
const FeatureTagParams = Type.Object({
  featureName: UrlFriendlyName,
  type: TagTypeName,
  value: Type.String({ minLength: 1, maxLength: 100 }),
});

const TAG_TYPES = '/api/admin/tag-types';
const FEATURE_TAGS = '/api/admin/features/:featureName/tags';

export const tagRoutes: RouteModule = async (app, { deps }) => {
  const tags = ['Tags'];

  app.get(TAG_TYPES, { schema: { tags, response: { 200: Type.Ref(TagTypesSchema) } }, config: { access: can('READ') } }, async () => ({
    version: 1 as const,
    tagTypes: await listTagTypes(deps.db),
  }));

  app.post(
    TAG_TYPES,
    {
      schema: { tags, body: Type.Ref(TagTypeSchema), response: { 201: Type.Ref(TagTypeSchema) } },
      config: { access: can('CREATE_TAG_TYPE') },
    },
    async (request, reply) => {
      const tagType = await inUnitOfWork(deps, actorOf(request), (uow) => createTagType(uow, request.body));
      return reply.status(201).send(tagType);
    },
  );

  // Unleash's create form asks whether a name is free before creating; a taken name is a 409.
  app.post(
    `${TAG_TYPES}/validate`,
    {
      schema: { tags, body: Type.Ref(TagTypeSchema), response: { 200: Type.Ref(ValidateTagTypeSchema) } },
      config: { access: can('CREATE_TAG_TYPE') },
    },
    async (request) => {
      await assertTagTypeNameFree(deps.db, request.body.name);
      return { valid: true, tagType: request.body };
    },
  );

  app.get(
    `${TAG_TYPES}/:name`,
    {
      schema: { tags, params: TagTypeParams, response: { 200: Type.Ref(TagTypeWithVersionSchema) } },
      config: { access: can('READ') },
    },
    async (request) => ({ version: 1 as const, tagType: await findTagType(deps.db, request.params.name) }),
  );

  app.put(
    `${TAG_TYPES}/:name`,
    {
      schema: { tags, params: TagTypeParams, body: Type.Ref(UpdateTagTypeSchema), response: { 200: Type.Ref(TagTypeSchema) } },
      config: { access: can('UPDATE_TAG_TYPE') },
    },
    async (request) => inUnitOfWork(deps, actorOf(request), (uow) => updateTagType(uow, request.params.name, request.body)),
  );

  app.delete(
    `${TAG_TYPES}/:name`,
    { schema: { tags, params: TagTypeParams }, config: { access: can('DELETE_TAG_TYPE') } },
    async (request, reply) => {
      await inUnitOfWork(deps, actorOf(request), (uow) => deleteTagType(uow, request.params.name));
      return reply.status(200).send();
    },
  );

  app.get('/api/admin/tags', { schema: { tags, response: { 200: Type.Ref(TagsSchema) } }, config: { access: can('READ') } }, async () => ({
    version: 1 as const,
    tags: await listTags(deps.db),
  }));

  app.get(
    '/api/admin/tags/:type',
    {
      schema: { tags, params: Type.Object({ type: TagTypeName }), response: { 200: Type.Ref(TagsSchema) } },
      config: { access: can('READ') },
    },
    async (request) => ({ version: 1 as const, tags: await listTags(deps.db, request.params.type) }),
  );

  app.get(
    '/api/admin/tags/:type/:value',
    {
      schema: { tags, params: TagParams, response: { 200: Type.Ref(TagWithVersionSchema) } },
      config: { access: can('READ') },
    },
    async (request) => ({ version: 1 as const, tag: await getTag(deps.db, request.params.type, request.params.value) }),
  );

  app.get(
    FEATURE_TAGS,
    {
      schema: { tags, params: FeatureParams, response: { 200: Type.Ref(TagsSchema) } },
      config: { access: can('READ') },
    },
    async (request) => ({ version: 1 as const, tags: await listFeatureTags(deps.db, request.params.featureName) }),
  );

  app.post(
    FEATURE_TAGS,
    {
      schema: {
        tags,
        params: FeatureParams,
        body: Type.Ref(TagSchema),
        response: { 200: Type.Ref(TagSchema), 201: Type.Ref(TagSchema) },
      },
      config: { access: can('UPDATE_FEATURE', FLAG_PARAM) },
    },
    async (request, reply) => {
      const { tag, added } = await inUnitOfWork(deps, actorOf(request), (uow) =>
        addFeatureTag(uow, request.params.featureName, request.body),
      );
      // 201 when the tag was added, 200 when the flag already had it: either way the flag now carries it.
      return reply.status(added ? 201 : 200).send(tag);
    },
  );

  app.put(
    FEATURE_TAGS,
    {
      schema: { tags, params: FeatureParams, body: Type.Ref(UpdateTagsSchema), response: { 200: Type.Ref(TagsSchema) } },
      config: { access: can('UPDATE_FEATURE', FLAG_PARAM) },
    },
    async (request) => {
      const current = await inUnitOfWork(deps, actorOf(request), (uow) => updateFeatureTags(uow, request.params.featureName, request.body));
      return { version: 1 as const, tags: current };
    },
  );

  app.delete(
    `${FEATURE_TAGS}/:type/:value`,
    { schema: { tags, params: FeatureTagParams }, config: { access: can('UPDATE_FEATURE', FLAG_PARAM) } },
    async (request, reply) => {
      const { featureName, type, value } = request.params;
      await inUnitOfWork(deps, actorOf(request), (uow) => removeFeatureTag(uow, featureName, { type, value }));
      return reply.status(200).send();
    },
  );
};
