import type { Selectable } from 'kysely';
import type { Config } from '../config.js';
import type { AddonsTable, EventsTable } from '../db/schema.js';
import type { AttemptResult, ClaimedDelivery } from '../domain/events/delivery-outbox.js';
import { toEventView } from '../domain/events/event-log.js';
import type { Clock } from '../shared/clock.js';
import type { OutboundHttp, SendOutcome } from './outbound-http.js';
import { findProvider } from '../domain/addons/providers/index.js';
import type { PreparedDelivery } from '../domain/addons/providers/provider.js';
import { signingSecretsInUse, standardWebhookHeaders } from '../domain/addons/webhook-signature.js';

export interface AttemptDeps {
  http: OutboundHttp;
  clock: Clock;
  config: Pick<Config, 'baseUrl' | 'integrations'>;
}

const FIRST_RETRY_DELAY_MS = 60_000;
const MAX_RETRY_DELAY_MS = 60 * 60_000;
const MASKED_PATH = '*****';

/** 1, 2, 4, 8 minutes…: the default 5 attempts span 15 minutes. */
function retryDelayMs(attempt: number): number {
  return Math.min(FIRST_RETRY_DELAY_MS * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
}

function describeOutcome(outcome: SendOutcome, timeoutMs: number): string {
  switch (outcome.kind) {
    case 'answered':
      return `status code ${outcome.statusCode}`;
    case 'timeout':
      return `no answer within ${timeoutMs} ms`;
    case 'network-error':
      return `network error (${outcome.message})`;
    case 'blocked':
      return `refused: ${outcome.message}`;
  }
}

const isDelivered = (outcome: SendOutcome) => outcome.kind === 'answered' && outcome.statusCode >= 200 && outcome.statusCode < 300;

/** A URL whose parameter is a secret (a Slack webhook URL is its own credential) shows only its origin. */
function displayUrl(url: string, secret: boolean): string {
  if (!secret) return url;
  const parsed = new URL(url);
  return parsed.pathname === '/' && parsed.search === '' ? `${parsed.origin}/` : `${parsed.origin}/${MASKED_PATH}`;
}

/**
 * The headers of a request: header names are case-insensitive, so later sources replace earlier ones whatever
 * their case. Headers a configuration sets cannot replace the delivery's own or its signature.
 */
function requestHeaders(
  contentType: string,
  providerHeaders: Record<string, string>,
  deliveryId: string,
  eventType: string,
  signature: Record<string, string>,
) {
  const headers = new Map<string, [string, string]>();
  const set = (name: string, value: string) => headers.set(name.toLowerCase(), [name, value]);
  set('Content-Type', contentType);
  set('User-Agent', 'Vexil');
  for (const [name, value] of Object.entries(providerHeaders)) set(name, value);
  set('X-Vexil-Delivery', deliveryId);
  set('X-Vexil-Event', eventType);
  for (const [name, value] of Object.entries(signature)) set(name, value);
  return Object.fromEntries(headers.values());
}

/**
 * One attempt of a delivery: the provider's requests, sent at once under one deadline, and the integration
 * event that describes it. A failure is retried with backoff unless attempts are used up or the address was
 * refused (retrying cannot change that). Never throws.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  delivery: ClaimedDelivery,
  addon: Selectable<AddonsTable>,
  eventRow: Selectable<EventsTable>,
): Promise<AttemptResult> {
  const { maxAttempts, deliveryTimeoutMs } = deps.config.integrations;
  const event = toEventView(eventRow);
  const attemptText = `attempt ${delivery.attempts} of ${Math.max(delivery.attempts, maxAttempts)}`;
  const baseDetails = {
    deliveryId: delivery.delivery_id,
    attempt: delivery.attempts,
    ...(delivery.redelivery ? { redelivery: true } : {}),
  };
  const unusable = (reason: string): AttemptResult => ({
    state: 'failed',
    stateDetails: `The configuration could not be used: ${reason} (${attemptText}); not retried`,
    details: baseDetails,
  });
  const provider = findProvider(addon.provider);
  if (!provider) return unusable(`unknown provider "${addon.provider}"`);
  let prepared: PreparedDelivery;
  try {
    prepared = provider.prepare({ event, parameters: addon.parameters, baseUrl: deps.config.baseUrl });
  } catch (error) {
    return unusable(error instanceof Error ? error.message : String(error));
  }

  const deadline = AbortSignal.timeout(deliveryTimeoutMs);
  const sentAt = deps.clock.now();
  const secrets = signingSecretsInUse(addon, sentAt);
  const outcomes = await Promise.all(
    prepared.requests.map((request) => {
      const signature = standardWebhookHeaders(secrets, delivery.delivery_id, sentAt, request.body);
      const headers = requestHeaders(request.contentType, request.headers, delivery.delivery_id, event.type, signature);
      return deps.http.post({ url: request.url, headers, body: request.body }, deadline);
    }),
  );

  const first = prepared.requests[0]!;
  const urlIsSecret = provider.definition.parameters.find((parameter) => parameter.name === 'url')?.sensitive ?? true;
  const details = {
    url: displayUrl(first.url, urlIsSecret),
    contentType: first.contentType,
    body: first.body,
    ...baseDetails,
    statusCode: outcomes[0]!.kind === 'answered' ? outcomes[0]!.statusCode : null,
    ...prepared.extraDetails,
  };
  const described = outcomes.map((outcome) => describeOutcome(outcome, deliveryTimeoutMs));
  const what = outcomes.length === 1 ? described[0]! : `${outcomes.length} requests: ${described.join('; ')}`;

  if (outcomes.every(isDelivered)) {
    if (prepared.problems.length === 0) return { state: 'success', stateDetails: `Delivered: ${what} (${attemptText})`, details };
    return {
      state: 'successWithErrors',
      stateDetails: `Delivered: ${what} (${attemptText}), but ${prepared.problems.join('; ')}`,
      details,
    };
  }
  const problems = prepared.problems.length === 0 ? '' : `; also ${prepared.problems.join('; ')}`;
  if (outcomes.some((outcome) => outcome.kind === 'blocked')) {
    return { state: 'failed', stateDetails: `Failed: ${what} (${attemptText}); not retried${problems}`, details };
  }
  if (delivery.attempts >= maxAttempts) {
    return { state: 'failed', stateDetails: `Failed: ${what} (${attemptText}); no attempts left${problems}`, details };
  }
  const retryAt = new Date(deps.clock.now().getTime() + retryDelayMs(delivery.attempts));
  return {
    state: 'failed',
    stateDetails: `Failed: ${what} (${attemptText}); next attempt at ${retryAt.toISOString()}${problems}`,
    details: { ...details, nextAttemptAt: retryAt.toISOString() },
    retryAt,
  };
}
