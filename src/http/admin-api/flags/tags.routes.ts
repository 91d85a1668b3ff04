import { Type } from '@sinclair/typebox';
import {
  addFeatureTag,
  createTag,
  deleteTagEverywhere,
  removeFeatureTag,
  updateFeatureTags,
  updateProjectFeatureTags,
} from '../../../domain/tags/feature-tags.js';
import { createTagType, deleteTagType, updateTagType } from '../../../domain/tags/tag-types.js';
import { assertTagTypeNameFree, findTagType, getTag, listFeatureTags, listTags, listTagTypes } from '../../../domain/tags/tags.js';
import { ProjectParams, UrlFriendlyName } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { TagSchema } from '../../features.schemas.js';
import { can, FLAG_PARAM, PROJECT_PARAM } from '../../plugins/access.js';
import {
  TagsSchema,
  TagTypeName,
  TagTypeSchema,
  TagTypesSchema,
  TagTypeWithVersionSchema,
  TagWithVersionSchema,
  TagsBulkAddSchema,
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

export const tagRoutes: RouteModule = async (app, { deps, act }) => {
  const tags = ['Tags'];
  const route = routesTagged(tags);

  app.get(TAG_TYPES, route(can('READ'), { ok: TagTypesSchema }), async () => ({
    version: 1 as const,
    tagTypes: await listTagTypes(deps.db),
  }));

  app.post(TAG_TYPES, route(can('CREATE_TAG_TYPE'), { body: TagTypeSchema, created: TagTypeSchema }), async (request, reply) => {
    const tagType = await act(request, (uow) => createTagType(uow, request.body));
    return reply.status(201).send(tagType);
  });

  // Unleash's create form asks whether a name is free before creating; a taken name is a 409.
  app.post(`${TAG_TYPES}/validate`, route(can('CREATE_TAG_TYPE'), { body: TagTypeSchema, ok: ValidateTagTypeSchema }), async (request) => {
    await assertTagTypeNameFree(deps.db, request.body.name);
    return { valid: true, tagType: request.body };
  });

  app.get(`${TAG_TYPES}/:name`, route(can('READ'), { params: TagTypeParams, ok: TagTypeWithVersionSchema }), async (request) => ({
    version: 1 as const,
    tagType: await findTagType(deps.db, request.params.name),
  }));

  app.put(
    `${TAG_TYPES}/:name`,
    route(can('UPDATE_TAG_TYPE'), { params: TagTypeParams, body: UpdateTagTypeSchema, ok: TagTypeSchema }),
    async (request) => act(request, (uow) => updateTagType(uow, request.params.name, request.body)),
  );

  app.delete(`${TAG_TYPES}/:name`, route(can('DELETE_TAG_TYPE'), { params: TagTypeParams }), async (request, reply) => {
    await act(request, (uow) => deleteTagType(uow, request.params.name));
    return reply.status(200).send();
  });

  app.get('/api/admin/tags', route(can('READ'), { ok: TagsSchema }), async () => ({
    version: 1 as const,
    tags: await listTags(deps.db),
  }));

  // Unleash lets anyone signed in make tags; here it takes changing flags, as deleting one does in both.
  app.post('/api/admin/tags', route(can('UPDATE_FEATURE'), { body: TagSchema, created: TagWithVersionSchema }), async (request, reply) => {
    const tag = await act(request, (uow) => createTag(uow, request.body));
    return reply
      .status(201)
      .header('location', `tags/${encodeURIComponent(tag.type)}/${encodeURIComponent(tag.value)}`)
      .send({ version: 1, tag });
  });

  app.delete('/api/admin/tags/:type/:value', route(can('UPDATE_FEATURE'), { params: TagParams }), async (request, reply) => {
    await act(request, (uow) => deleteTagEverywhere(uow, request.params));
    return reply.status(200).send();
  });

  app.put(
    '/api/admin/projects/:projectId/tags',
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ProjectParams, body: TagsBulkAddSchema }),
    async (request, reply) => {
      await act(request, (uow) => updateProjectFeatureTags(uow, request.params.projectId, request.body.features, request.body.tags));
      return reply.status(200).send();
    },
  );

  app.get('/api/admin/tags/:type', route(can('READ'), { params: Type.Object({ type: TagTypeName }), ok: TagsSchema }), async (request) => ({
    version: 1 as const,
    tags: await listTags(deps.db, request.params.type),
  }));

  app.get('/api/admin/tags/:type/:value', route(can('READ'), { params: TagParams, ok: TagWithVersionSchema }), async (request) => ({
    version: 1 as const,
    tag: await getTag(deps.db, request.params.type, request.params.value),
  }));

  app.get(FEATURE_TAGS, route(can('READ'), { params: FeatureParams, ok: TagsSchema }), async (request) => ({
    version: 1 as const,
    tags: await listFeatureTags(deps.db, request.params.featureName),
  }));

  app.post(
    FEATURE_TAGS,
    route(can('UPDATE_FEATURE', FLAG_PARAM), {
      params: FeatureParams,
      body: TagSchema,
      response: { 200: Type.Ref(TagSchema), 201: Type.Ref(TagSchema) },
    }),
    async (request, reply) => {
      const { tag, added } = await act(request, (uow) => addFeatureTag(uow, request.params.featureName, request.body));
      // 201 when the tag was added, 200 when the flag already had it: either way the flag now carries it.
      return reply.status(added ? 201 : 200).send(tag);
    },
  );

  app.put(
    FEATURE_TAGS,
    route(can('UPDATE_FEATURE', FLAG_PARAM), { params: FeatureParams, body: UpdateTagsSchema, ok: TagsSchema }),
    async (request) => {
      const current = await act(request, (uow) => updateFeatureTags(uow, request.params.featureName, request.body));
      return { version: 1 as const, tags: current };
    },
  );

  app.delete(
    `${FEATURE_TAGS}/:type/:value`,
    route(can('UPDATE_FEATURE', FLAG_PARAM), { params: FeatureTagParams }),
    async (request, reply) => {
      const { featureName, type, value } = request.params;
      await act(request, (uow) => removeFeatureTag(uow, featureName, { type, value }));
      return reply.status(200).send();
    },
  );
};
