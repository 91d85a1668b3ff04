import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import type { Logger } from 'pino';
import type { EdgeConfig } from '../config.js';
import { ClientFeatureStore } from '../domain/client-features/client-feature-store.js';
import { UsageTally } from '../domain/usage/usage-tally.js';
import { EventStreams } from '../http/event-streams.js';
import { hashToken } from '../shared/secrets.js';
import { Metrics } from '../shared/metrics.js';
import { RepeatingPass } from '../workers/repeating-pass.js';
import { buildEdgeApp, type EdgeServices } from './edge-app.js';
import { BackupFolder } from './edge-backup.js';
import { EdgeTokens } from './edge-tokens.js';
import { EdgeUsage } from './edge-usage.js';
import { UpstreamClient, UpstreamRefused } from './upstream-client.js';
import { UpstreamMirror } from './upstream-mirror.js';

/** Evaluations the edge makes itself (OFREP) are reported as the usage of this application, as the server does. */
const EVALUATION_USAGE_APPLICATION = 'openfeature';

export interface RunningEdge {
  app: FastifyInstance;
  services: EdgeServices;
  /** One round of fetches, revalidation and sending usage now (tests; the timers do the same on their intervals). */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Vexil Edge's composition root: the one place that builds its long-lived services (the upstream client, the mirror
 * of the upstream's flags and the SDK store it feeds, the tokens, the usage gathered for upstream, the streams, the
 * backup) and its timers, and ends them in order. It starts from the backup when there is one, so it serves at once,
 * then follows the upstream.
 */
export async function startEdge(config: EdgeConfig, log: Logger): Promise<RunningEdge> {
  const upstream = new UpstreamClient(config.upstreamUrl, config.upstreamTimeoutMs);
  const metrics = new Metrics();
  const tokens = new EdgeTokens(upstream, () => Date.now());
  const usage = new EdgeUsage();
  const backup = config.backupFolder ? new BackupFolder(config.backupFolder) : undefined;

  let backupDue: NodeJS.Timeout | undefined;
  const writeBackup = () => {
    backupDue = undefined;
    backup
      ?.write({ version: 1, writtenAt: new Date().toISOString(), tokens: tokens.backedUp(), syncs: mirror.backedUp() })
      .catch((error: unknown) => log.error({ err: error }, 'Writing the backup failed; the next change tries again'));
  };
  // Changes that land together (a round of fetches) are written once.
  const scheduleBackup = () => {
    if (backup && !backupDue) backupDue = setTimeout(writeBackup, 50);
  };
  const mirror = new UpstreamMirror(upstream, scheduleBackup);
  const store = new ClientFeatureStore(mirror.source);
  await store.start(mirror.listen);

  const restored = await backup?.read().catch((error: unknown) => {
    log.error({ err: error }, 'The backup cannot be read; starting without it');
    return undefined;
  });
  if (restored) {
    tokens.restore(restored.tokens);
    mirror.restore(restored.syncs);
    log.info(
      { flags: restored.syncs.reduce((sum, sync) => sum + sync.features.length, 0), writtenAt: restored.writtenAt },
      'Serving from the backup until the upstream answers',
    );
  }

  /** TOKENS not followed yet: checked with the upstream at start, and on each round until it answers. */
  const unfollowed = new Set(config.tokens);
  const followConfiguredTokens = async () => {
    await Promise.all(
      [...unfollowed].map(async (secret, index) => {
        const check = await tokens.check(secret);
        if (check.kind === 'unavailable') {
          // The backup knows it: its flags are served, and fetched again once the upstream answers.
          const known = tokens.byHash(hashToken(secret));
          if (known.kind === 'valid') void mirror.follow(secret, known.scope);
          return;
        }
        unfollowed.delete(secret);
        if (check.kind === 'invalid' || check.scope.type !== 'client') {
          log.error(`TOKENS entry ${index + 1} is not a client token the upstream knows; it is not followed`);
          return;
        }
        await mirror.follow(secret, check.scope);
      }),
    );
  };

  const evaluationUsage = new UsageTally(EVALUATION_USAGE_APPLICATION, new Date());
  const sendUsage = async () => {
    const now = new Date();
    for (const { token, report } of evaluationUsage.takeReports(now)) usage.report(token.environment, report);
    for (const environment of usage.environments()) {
      const secret = mirror.secretFor(environment);
      if (!secret) continue;
      await usage
        .flush(environment, now, async (bulk) => {
          try {
            await upstream.sendBulkMetrics(secret, bulk);
          } catch (error) {
            // Refused (not unreachable): sending it again would be refused again.
            if (!(error instanceof UpstreamRefused)) throw error;
            log.warn({ err: error, environment }, 'The upstream refused the usage gathered at the edge; it is dropped');
          }
        })
        .catch((error: unknown) => log.warn({ err: error, environment }, 'Usage could not be sent upstream; kept for the next interval'));
    }
  };

  const refresh = async () => {
    if (unfollowed.size > 0) await followConfiguredTokens();
    await mirror.refresh();
  };
  const revalidate = async () => {
    mirror.forget(await tokens.revalidate());
    scheduleBackup();
  };

  await followConfiguredTokens().catch((error: unknown) => log.error({ err: error }, 'Following TOKENS failed'));
  if (!mirror.status.lastSuccessAt && unfollowed.size === 0) mirror.status.reachable = true;

  registerEdgeGauges(metrics, mirror, usage);
  const streams = new EventStreams(metrics.streamingConnections);
  const services: EdgeServices = {
    store,
    mirror,
    tokens,
    usage,
    evaluationUsage,
    streams,
    metrics,
    followNewTokens: config.tokens.length === 0,
    trustProxy: config.trustProxy,
    now: () => new Date(),
  };
  const app = await buildEdgeApp(services, log);
  app.addHook('preClose', async () => streams.endAll());

  const onError = (what: string) => (error: unknown) => log.warn({ err: error }, `${what} failed; trying again on the next interval`);
  const passes = [
    new RepeatingPass(refresh, onError('Fetching the flags from the upstream'), config.featuresRefreshIntervalMs),
    new RepeatingPass(revalidate, onError('Checking the tokens with the upstream'), config.tokenRevalidationIntervalMs),
    new RepeatingPass(sendUsage, onError('Sending usage upstream'), config.metricsIntervalMs),
  ];
  for (const pass of passes) pass.start();

  return {
    app,
    services,
    async runOnce() {
      await refresh().catch(onError('Fetching the flags from the upstream'));
      await revalidate().catch(onError('Checking the tokens with the upstream'));
      await sendUsage();
    },
    async stop() {
      mirror.stop();
      await Promise.all(passes.map((pass) => pass.stop()));
      await app.close();
      // What was gathered since the last interval goes upstream if it can; otherwise it is lost with the process.
      await sendUsage();
      if (backupDue) {
        clearTimeout(backupDue);
        writeBackup();
      }
      await store.stop();
      await upstream.close();
    },
  };
}

/** What the edge's own gauges read at each scrape: the upstream's state, the flags held, the usage waiting. */
function registerEdgeGauges(metrics: Metrics, mirror: UpstreamMirror, usage: EdgeUsage): void {
  const registers = [metrics.registry];
  new Gauge({
    name: 'vexil_edge_upstream_reachable',
    help: 'Whether the last round of fetches reached the upstream (1) or not (0); the edge serves what it holds either way',
    registers,
    collect() {
      this.set(mirror.status.reachable ? 1 : 0);
    },
  });
  new Gauge({
    name: 'vexil_edge_upstream_last_success_timestamp_seconds',
    help: 'When a round of fetches last reached the upstream (0: never since start)',
    registers,
    collect() {
      this.set((mirror.status.lastSuccessAt?.getTime() ?? 0) / 1000);
    },
  });
  new Gauge({
    name: 'vexil_edge_flags',
    help: 'Flags the edge holds, by environment',
    labelNames: ['environment'] as const,
    registers,
    collect() {
      this.reset();
      for (const [environment, count] of mirror.flagCounts()) this.set({ environment }, count);
    },
  });
  new Gauge({
    name: 'vexil_edge_usage_held',
    help: 'Usage counts (flag, application, environment and hour each) waiting to be sent upstream',
    registers,
    collect() {
      this.set(usage.heldMetrics);
    },
  });
  new Gauge({
    name: 'vexil_edge_usage_dropped',
    help: 'Evaluations counted by SDKs that were dropped because the usage held for the upstream reached its bound',
    registers,
    collect() {
      this.set(usage.dropped);
    },
  });
}
