import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SdkToken } from '../../domain/access/authenticate.js';
import { admitReportingApplication, type ClientRegistration } from '../../domain/client-features/client-registration.js';
import { recordImpactMetrics } from '../../domain/impact-metrics/impact-metrics.js';
import { tripSafeguard } from '../../domain/release-plans/plans.js';
import { crossedSafeguards } from '../../domain/release-plans/safeguards.js';
import { recordClientMetrics } from '../../domain/usage/client-metrics.js';
import { assertReportBucket } from '../../domain/usage/sdk-report-checks.js';
import { inUnitOfWork } from '../../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../../domain/access/actor.js';
import type { RouteDeps } from '../deps.js';
import { sdkTokenOf } from '../plugins/route-access.js';
import type { ClientMetricsSchema, ClientRegistrationSchema } from '../sdk.schemas.js';

/** What SDKs report (registrations, metrics) as the domain takes it, for the client and frontend APIs alike. */

type Registration = Static<typeof ClientRegistrationSchema>;

/** The size a held report is counted at: its JSON, measured only when it is held. */
export const jsonLengthOf = (body: unknown) => () => Buffer.byteLength(JSON.stringify(body));

export function registrationOf(body: Registration, token: SdkToken, clientIp: string): ClientRegistration {
  return {
    appName: body.appName,
    instanceId: body.instanceId ?? 'default',
    environment: token.environment,
    ...(body.sdkVersion ? { sdkVersion: body.sdkVersion } : {}),
    strategies: body.strategies ?? [],
    ...(body.started !== undefined ? { started: new Date(body.started) } : {}),
    ...(body.interval !== undefined ? { intervalMs: body.interval } : {}),
    clientIp,
  };
}

/**
 * The handler of one SDK's metrics report, for server-side (client token) and frontend (frontend token) SDKs
 * alike: the token's environment and projects decide where the counts go. The report is stored whole or not at
 * all, in one transaction: an SDK sends a refused report again, so a part stored before a refusal would count
 * twice. Safeguards read the new metrics after the commit, and nothing they do fails the report.
 */
/** `answered` is the success status: 202 for server-side SDKs, 200 for frontend ones, as Unleash answers each. */
export function recordMetricsReport(
  deps: Pick<RouteDeps, 'db' | 'clock' | 'config' | 'newApplicationLimit' | 'sdkReports'>,
  answered: 200 | 202 = 202,
) {
  return async (request: FastifyRequest<{ Body: Static<typeof ClientMetricsSchema> }>, reply: FastifyReply) => {
    const { appName, bucket, impactMetrics = [] } = request.body;
    assertReportBucket(bucket, deps.clock.now());
    const token = sdkTokenOf(request);
    const written = await deps.sdkReports.write('metrics', jsonLengthOf(request.body), async (uow) => {
      const reporter = { appName, instanceId: request.body.instanceId ?? 'default', environment: token.environment };
      await admitReportingApplication(uow, token.id, reporter, deps.newApplicationLimit);
      if (impactMetrics.length > 0) {
        await recordImpactMetrics(
          uow.tx,
          { appName, environment: token.environment, metrics: impactMetrics, now: uow.now },
          deps.config.impactMetrics,
        );
      }
      await recordClientMetrics(uow.tx, token, request.body, uow.now);
    });
    // A safeguard on these metrics acts on the report that crosses its threshold, not a scheduler pass later (for a
    // report held while the database is away, the scheduler's).
    if (impactMetrics.length > 0 && written === 'written') {
      const scope = { environment: token.environment, metricNames: [...new Set(impactMetrics.map((metric) => metric.name))] };
      const onError = (error: unknown, releasePlanId: string | undefined) =>
        request.log.error({ err: error, releasePlanId }, 'Evaluating a safeguard after a metrics report failed; the report is kept');
      for (const crossed of await crossedSafeguards(deps, scope, onError)) {
        await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => tripSafeguard(uow, crossed)).catch((error: unknown) =>
          onError(error, crossed.releasePlanId),
        );
      }
    }
    return reply.status(answered).send();
  };
}
