import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { exportFeatures, recordExport, type ExportQuery } from '../../../domain/features-batch/features-export.js';
import { importFeatures, validateImport, type ImportDocument } from '../../../domain/features-batch/features-import.js';
import { applyAnswer } from '../../../domain/flags-file/apply-flags-file.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { ExportQuerySchema, ExportResultSchema, ImportTogglesSchema, ImportTogglesValidateSchema } from './features-batch.schemas.js';
import { ApplyReportSchema } from './flags-file.schemas.js';
import { can } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';

const tags = ['Import/Export'];
const route = routesTagged(tags);
const BATCH = '/api/admin/features-batch';
/** An export of the most flags an import takes, with their strategies, fits well within this. */
const DOCUMENT_BODY_LIMIT = 16 * 1024 * 1024;
/** The project a document is exported from or imported into, named in the body: it must be one the caller can see. */
const BODY_PROJECT = (request: FastifyRequest) => (request.body as { project?: string }).project;

/** Unleash's export and import of flags, one environment at a time, in its file format. */
export const featuresBatchRoutes: RouteModule = async (app, { deps, act }) => {
  app.post(
    `${BATCH}/export`,
    route(can('READ', BODY_PROJECT), { body: ExportQuerySchema, ok: ExportResultSchema }),
    async (request, reply) => {
      const { downloadFile, ...query } = request.body as ExportQuery & { downloadFile?: boolean };
      const result = await exportFeatures(deps.db, actorOf(request), query);
      await act(request, (uow) => recordExport(uow, query, result), { inMaintenance: 'the record of an export' });
      if (downloadFile) {
        const day = deps.clock.now().toISOString().slice(0, 10);
        reply.header('content-disposition', `attachment; filename="export-${query.environment}-${day}.json"`);
      }
      return result;
    },
  );

  app.post(
    `${BATCH}/validate`,
    {
      bodyLimit: DOCUMENT_BODY_LIMIT,
      schema: { tags, body: Type.Ref(ImportTogglesSchema), response: { 200: Type.Ref(ImportTogglesValidateSchema) } },
      config: { access: can('READ', BODY_PROJECT) },
    },
    async (request) => validateImport(deps.db, actorOf(request), request.body as ImportDocument),
  );

  app.post(
    `${BATCH}/import`,
    {
      bodyLimit: DOCUMENT_BODY_LIMIT,
      schema: {
        tags,
        querystring: Type.Object({ dryRun: Type.Optional(Type.Boolean({ description: 'Report what would change, changing nothing' })) }),
        body: Type.Ref(ImportTogglesSchema),
        response: { 200: Type.Ref(ApplyReportSchema) },
      },
      // What the document needs beyond this (creating flags, context fields, tag types) is checked against it.
      config: { access: can('UPDATE_FEATURE', BODY_PROJECT) },
    },
    async (request) => {
      const dryRun = request.query.dryRun ?? false;
      const document = request.body as ImportDocument;
      return applyAnswer(await act(request, (uow) => importFeatures(uow, document), { rollback: dryRun }), dryRun);
    },
  );
};
