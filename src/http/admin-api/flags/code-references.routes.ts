import { Type } from '@sinclair/typebox';
import { codeReferencesOfFlag, pushCodeReferences } from '../../../domain/code-references/code-references.js';
import { removalReadiness } from '../../../domain/code-references/removal-readiness.js';
import { UrlFriendlyName } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';
import {
  CodeReferencePushSchema,
  CodeReferencePushSummarySchema,
  FlagCodeReferencesSchema,
  RemovalReadinessSchema,
} from './code-references.schemas.js';

const route = routesTagged(['Code references']);
const FeatureParams = Type.Object({ projectId: UrlFriendlyName, featureName: UrlFriendlyName });

/** 50,000 references with their context lines. */
const PUSH_BODY_LIMIT = 32 * 1024 * 1024;
/** A flag's page lists at most this many; `total` says how many there are. */
const LISTED_REFERENCES = 1000;

/** Where code reads each flag (pushed by a repository's CI, `vexil refs push`), and whether the flag can leave it. */
export const codeReferenceRoutes: RouteModule = async (app, { deps, act }) => {
  app.post(
    '/api/admin/code-references',
    {
      ...route(can('UPDATE_CODE_REFERENCES'), { body: CodeReferencePushSchema, ok: CodeReferencePushSummarySchema }),
      bodyLimit: PUSH_BODY_LIMIT,
    },
    async (request) => act(request, (uow) => pushCodeReferences(uow, request.body)),
  );

  app.get(
    '/api/admin/projects/:projectId/features/:featureName/removal-readiness',
    route(can('READ'), { params: FeatureParams, ok: RemovalReadinessSchema }),
    async (request) => removalReadiness(deps.db, actorOf(request), request.params.projectId, request.params.featureName, deps.clock.now()),
  );

  app.get(
    '/api/admin/projects/:projectId/features/:featureName/code-references',
    route(can('READ'), { params: FeatureParams, ok: FlagCodeReferencesSchema }),
    async (request) => codeReferencesOfFlag(deps.db, request.params.projectId, request.params.featureName, LISTED_REFERENCES),
  );
};
