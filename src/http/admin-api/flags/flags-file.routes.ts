import { actorOf } from '../../plugins/route-access.js';
import { Type } from '@sinclair/typebox';
import { applyAnswer, applyWholeFlagsFile } from '../../../domain/flags-file/apply-flags-file.js';
import { exportFlagsFile } from '../../../domain/flags-file/export-flags-file.js';
import type { FlagsFile } from '../../../domain/flags-file/flags-file.js';
import { UrlFriendlyName } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { ApplyReportSchema, FlagsFileSchema } from './flags-file.schemas.js';
import { can } from '../../plugins/access.js';
import { PUBLIC } from '../../plugins/route-access.js';

const tags = ['Flags file'];
const route = routesTagged(tags);
const FLAGS_FILE = '/api/admin/flags-file';
/** A file of the most flags allowed, with their strategies, fits well within this. */
const FILE_BODY_LIMIT = 16 * 1024 * 1024;

export const flagsFileRoutes: RouteModule = async (app, { deps, act }) => {
  app.get(
    FLAGS_FILE,
    route(can('READ'), {
      querystring: Type.Object({ project: Type.Optional(UrlFriendlyName), archived: Type.Optional(Type.Boolean()) }),
      ok: FlagsFileSchema,
    }),
    async (request) =>
      exportFlagsFile(deps.db, actorOf(request), { project: request.query.project, includeArchived: request.query.archived }),
  );

  app.post(
    `${FLAGS_FILE}/apply`,
    {
      bodyLimit: FILE_BODY_LIMIT,
      schema: {
        tags,
        querystring: Type.Object({ dryRun: Type.Optional(Type.Boolean()) }),
        body: Type.Ref(FlagsFileSchema),
        response: { 200: Type.Ref(ApplyReportSchema) },
      },
      config: { access: can('ADMIN') },
    },
    async (request) => {
      const dryRun = request.query.dryRun ?? false;
      const file = request.body as FlagsFile;
      return applyAnswer(await act(request, (uow) => applyWholeFlagsFile(uow, file), { rollback: dryRun }), dryRun);
    },
  );

  // Editors validate flags files against this (`# yaml-language-server: $schema=…`); it is public, like /docs.
  app.get('/docs/flags-file.schema.json', { schema: { hide: true }, config: { access: PUBLIC } }, async () => ({
    $schema: 'http://json-schema.org/draft-07/schema#',
    ...JSON.parse(JSON.stringify({ ...FlagsFileSchema, $id: undefined })),
  }));
};
