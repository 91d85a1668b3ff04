import { ChangeFeed } from '../domain/events/change-feed.js';
import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import type { Logger } from 'pino';
import type { EdgeConfig, EdgeOffline, EdgeUpstream } from '../config.js';
import { ClientFeatureStore } from '../domain/client-features/client-feature-store.js';
import { UsageTally } from '../domain/usage/usage-tally.js';
import { EventStreams } from '../http/sdk-api/event-streams.js';
import { hashToken } from '../shared/secrets.js';
import { AddressRanges } from '../shared/address-ranges.js';
import { Metrics } from '../shared/metrics.js';
import { RepeatingPass } from '../workers/repeating-pass.js';
import { buildEdgeApp, type EdgeServices } from './edge-app.js';
import { BootstrapFile } from './bootstrap-file.js';
import type { ConfigurationFeed } from './configuration-feed.js';
import { BackupFolder, type BackupStore, type EdgeBackup, RedisBackup } from './edge-backup.js';
import { EdgeTokens, OfflineTokens, type TokenChecker } from './edge-tokens.js';
import { EdgeUsage } from './edge-usage.js';
import { EdgeAssignments } from './edge-assignments.js';
import { UpstreamClient, UpstreamRefused } from './upstream-client.js';
import { UpstreamMirror } from './upstream-mirror.js';

/** Evaluations the edge makes itself (OFREP) are reported as the usage of this application, as the server does. */
const EVALUATION_USAGE_APPLICATION = 'openfeature';

export interface RunningEdge {
  app: FastifyInstance;
  services: EdgeServices;
  /**
   * One round of fetches, revalidation and sending usage now, and the backup written (tests; the timers do the same on
   * their intervals).
   */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

/** Where an edge's flags and tokens come from, with the periodic work that keeps them current. */
/** How often the assignments of the edge's evaluations are forwarded upstream. */
const ASSIGNMENTS_INTERVAL_MS = 2000;

interface FlagSupply {
  flags: ConfigurationFeed;
  tokens: TokenChecker;
  /** Forwards experiments' assignments of the edge's evaluations upstream (none offline: nobody to forward to). */
  assignments?: EdgeAssignments;
  /** The periodic work, each with what it does (for the log when a round fails) and its interval. */
  rounds: Array<{ what: string; run: () => Promise<void>; intervalMs: number }>;
  followNewTokens: boolean;
  /** Writes a backup that is due now rather than after its short delay, and waits for it (the end of a round). */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Following an upstream: the backup first (so the edge serves at once), then TOKENS checked with the upstream and
 * their flags fetched, then the change streams, the refresh and revalidation rounds, and usage sent upstream.
 */
async function followUpstream(
  config: EdgeConfig,
  source: EdgeUpstream,
  usage: EdgeUsage,
  evaluationUsage: UsageTally,
  log: Logger,
): Promise<FlagSupply> {
  const upstream = new UpstreamClient(source.upstreamUrl, config.upstreamTimeoutMs, {
    appName: config.appName,
    instanceId: config.instanceId,
  });
  const tokens = new EdgeTokens(upstream, () => Date.now());
  tokens.trust(config.pretrustedTokens);
  const backups = await backupStores(config, log);

  let backupDue: NodeJS.Timeout | undefined;
  let lastWrite: Promise<unknown> = Promise.resolve();
  const writeBackup = () => {
    backupDue = undefined;
    const backup = { version: 1 as const, writtenAt: new Date().toISOString(), tokens: tokens.backedUp(), syncs: mirror.backedUp() };
    lastWrite = Promise.all(
      backups.map((store) =>
        store
          .write(backup)
          .catch((error: unknown) =>
            log.error({ err: error, backup: store.name }, 'Writing the backup failed; the next change tries again'),
          ),
      ),
    );
  };
  const settle = async () => {
    if (backupDue) {
      clearTimeout(backupDue);
      writeBackup();
    }
    await lastWrite;
  };
  // Changes that land together (a round of fetches) are written once.
  const scheduleBackup = () => {
    if (backups.length > 0 && !backupDue) backupDue = setTimeout(writeBackup, 50);
  };
  // A change upstream may be an experiment starting or ending: which flags to forward assignments for is asked again.
  let experimentsDue: NodeJS.Timeout | undefined;
  const askExperimentsSoon = () => {
    experimentsDue ??= setTimeout(() => {
      experimentsDue = undefined;
      assignments.refresh().catch((error: unknown) => log.warn({ err: error }, 'Asking the upstream for its experiments failed'));
    }, 100);
  };
  const mirror = new UpstreamMirror(upstream, () => {
    scheduleBackup();
    askExperimentsSoon();
  });
  const assignments = new EdgeAssignments(
    upstream,
    (environment) => mirror.secretFor(environment),
    () => mirror.flagCounts().map(([environment]) => environment),
  );

  // The newest of the backups there are (a folder and a Redis may both hold one).
  const read = await Promise.all(
    backups.map((store) =>
      store.read().catch((error: unknown) => {
        log.error({ err: error, backup: store.name }, 'The backup cannot be read; starting without it');
        return undefined;
      }),
    ),
  );
  const restored = read.reduce<EdgeBackup | undefined>(
    (newest, backup) => (backup && (!newest || backup.writtenAt > newest.writtenAt) ? backup : newest),
    undefined,
  );
  if (restored) {
    tokens.restore(restored.tokens);
    mirror.restore(restored.syncs);
    const flags = restored.syncs.reduce((sum, sync) => sum + sync.features.length, 0);
    log.info({ flags, writtenAt: restored.writtenAt }, 'Serving from the backup until the upstream answers');
  }

  /** TOKENS not followed yet: checked with the upstream at start, and on each round until it answers. */
  const unfollowed = new Set(source.tokens);
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

  await followConfiguredTokens().catch((error: unknown) => log.error({ err: error }, 'Following TOKENS failed'));
  if (!mirror.status.lastSuccessAt && unfollowed.size === 0) mirror.status.reachable = true;
  await assignments.refresh().catch((error: unknown) => log.warn({ err: error }, 'Asking the upstream for its experiments failed'));
  return {
    flags: mirror,
    tokens,
    assignments,
    followNewTokens: source.tokens.length === 0,
    settle,
    rounds: [
      {
        what: 'Fetching the flags from the upstream',
        intervalMs: config.featuresRefreshIntervalMs,
        run: async () => {
          if (unfollowed.size > 0) await followConfiguredTokens();
          await mirror.refresh();
          await assignments.refresh();
        },
      },
      { what: "Forwarding experiments' assignments upstream", intervalMs: ASSIGNMENTS_INTERVAL_MS, run: () => assignments.send() },
      {
        what: 'Checking the tokens with the upstream',
        intervalMs: config.tokenRevalidationIntervalMs,
        run: async () => {
          mirror.forget(await tokens.revalidate());
          scheduleBackup();
        },
      },
      { what: 'Sending usage upstream', intervalMs: config.metricsIntervalMs, run: sendUsage },
    ],
    async stop() {
      mirror.stop();
      clearTimeout(experimentsDue);
      // What was gathered since the last interval goes upstream if it can; otherwise it is lost with the process.
      await sendUsage();
      await assignments.send().catch(() => undefined);
      await settle();
      await Promise.all(backups.map((store) => store.close()));
    },
  };
}

/** BACKUP_FOLDER and REDIS_URL, those set; a Redis that cannot be reached at start is left out, with a log line. */
async function backupStores(config: EdgeConfig, log: Logger): Promise<BackupStore[]> {
  const stores: BackupStore[] = config.backupFolder ? [new BackupFolder(config.backupFolder)] : [];
  if (config.redisUrl) {
    const redis = await RedisBackup.connect(config.redisUrl, (error) => log.warn({ err: error }, 'Redis: the connection failed')).catch(
      (error: unknown) => {
        log.error({ err: error }, 'Redis cannot be reached; the edge starts without its backup there');
        return undefined;
      },
    );
    if (redis) stores.push(redis);
  }
  return stores;
}

/** Offline mode: the bootstrap file, read again on its interval, and the tokens given. Usage has nowhere to go. */
async function readOffline(config: EdgeConfig, source: EdgeOffline, log: Logger): Promise<FlagSupply> {
  const file = new BootstrapFile(source.bootstrapFile, () =>
    log.info({ file: source.bootstrapFile }, 'Read the flags of the bootstrap file'),
  );
  await file.read();
  return {
    flags: file,
    tokens: new OfflineTokens({ client: source.clientTokens, frontend: source.frontendTokens }, config.pretrustedTokens),
    followNewTokens: false,
    rounds:
      source.reloadIntervalMs > 0
        ? [{ what: 'Reading the bootstrap file', intervalMs: source.reloadIntervalMs, run: () => file.read() }]
        : [],
    async settle() {},
    async stop() {},
  };
}

/**
 * Vexil Edge's composition root: the one place that builds its long-lived services (the flags from upstream or a
 * file and the SDK store they feed, the tokens, the usage gathered for upstream, the streams, the backup) and its
 * timers, and ends them in order.
 */
export async function startEdge(config: EdgeConfig, log: Logger): Promise<RunningEdge> {
  const metrics = new Metrics();
  const usage = new EdgeUsage();
  const evaluationUsage = new UsageTally(EVALUATION_USAGE_APPLICATION, new Date());
  const supply =
    config.source.kind === 'offline'
      ? await readOffline(config, config.source, log)
      : await followUpstream(config, config.source, usage, evaluationUsage, log);
  const store = new ClientFeatureStore(supply.flags.source, (error, environment) => {
    metrics.backgroundFailures.inc({ work: 'sdk store rebuild' });
    log.warn(
      { err: error, environment },
      "Rebuilding an environment's SDK configuration failed; it is tried again on the next change or read",
    );
  });
  const changeFeed = new ChangeFeed(supply.flags.changes, (error) => log.warn({ err: error }, 'A change feed subscriber failed'));
  changeFeed.subscribe((payload) => store.changed(payload));
  await changeFeed.start();
  metrics.countCachedClientAnswers(() => store.cachedAnswers());

  registerEdgeGauges(metrics, supply.flags, usage);
  const streams = new EventStreams(metrics.streamingConnections);
  const services: EdgeServices = {
    store,
    flags: supply.flags,
    tokens: supply.tokens,
    ...(supply.assignments ? { assignments: supply.assignments } : {}),
    usage,
    evaluationUsage,
    streams,
    metrics,
    followNewTokens: supply.followNewTokens,
    trustProxy: config.trustProxy,
    allowList: config.allowList.length > 0 ? new AddressRanges(config.allowList) : undefined,
    denyList: config.denyList.length > 0 ? new AddressRanges(config.denyList) : undefined,
    backstage: config.backstage,
    timeouts: { requestMs: config.requestTimeoutMs, keepAliveMs: config.keepAliveTimeoutMs },
    now: () => new Date(),
  };
  const app = await buildEdgeApp(services, log);
  app.addHook('preClose', async () => streams.endAll());

  const onError = (what: string) => (error: unknown) => log.warn({ err: error }, `${what} failed; trying again on the next interval`);
  const passes = supply.rounds.map((round) => new RepeatingPass(round.run, onError(round.what), round.intervalMs));
  for (const pass of passes) pass.start();

  return {
    app,
    services,
    async runOnce() {
      for (const round of supply.rounds) await round.run().catch(onError(round.what));
      await supply.settle();
    },
    async stop() {
      await Promise.all(passes.map((pass) => pass.stop()));
      await app.close();
      await supply.stop();
      await changeFeed.stop();
    },
  };
}

/** What the edge's own gauges read at each scrape: the upstream's state, the flags held, the usage waiting. */
function registerEdgeGauges(metrics: Metrics, mirror: ConfigurationFeed, usage: EdgeUsage): void {
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
