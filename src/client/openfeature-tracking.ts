/**
 * OpenFeature's `track()` against Vexil, for applications: wrap the provider they already use (OFREP's, or any
 * other) and `client.track('checkout', context, { value: 42 })` reaches Vexil's track endpoint, where experiments'
 * metrics read it. Works with the server SDK (`@openfeature/server-sdk`, client token) and the web SDK
 * (`@openfeature/web-sdk`, frontend token). Imports nothing: it runs in the application, not in Vexil.
 *
 *   import { withVexilTracking } from 'vexil/openfeature';
 *   await OpenFeature.setProviderAndWait(withVexilTracking(new OFREPProvider({ baseUrl, headers }), { url: baseUrl, token }));
 *   OpenFeature.getClient().track('checkout', { targetingKey: 'u-123' }, { value: 42 });
 *
 * `vexilExposureHook` (below) sends exposures the same way, for the flags in a running experiment.
 */

/** OpenFeature's evaluation context and tracking details, as far as tracking reads them. */
type Context = Record<string, unknown> & { targetingKey?: string };
type Details = Record<string, unknown> & { value?: number };

export interface VexilTrackingOptions {
  /** Vexil's address, e.g. `https://flags.example.com`. */
  url: string;
  /** A client token (server SDK) or a frontend token (web SDK). */
  token: string;
  /** Which API the token is for: `client` (the default) or `frontend`. */
  api?: 'client' | 'frontend';
  /** How long events wait to be sent together; 2 seconds unless given. */
  flushIntervalMs?: number;
  /** Events held at most while Vexil does not answer; older ones are dropped first. 10,000 unless given. */
  maxHeld?: number;
  /** Told when a batch could not be sent (it is kept and tried again, up to `maxHeld`). */
  onError?: (error: unknown) => void;
}

/** Sent within seconds, without a time: Vexil's clock dates it, as a browser's may be minutes off. */
interface TrackedEvent {
  event: string;
  targetingKey?: string;
  context?: Record<string, unknown>;
  value?: number;
}

/** Vexil's endpoint takes at most this many events a request. */
const BATCH = 1000;

/** Holds tracked events and sends them in batches; `track` never blocks or throws, as OpenFeature's spec asks. */
export class VexilTracker {
  private held: TrackedEvent[] = [];
  private readonly timer: ReturnType<typeof setInterval>;
  private sending: Promise<void> | undefined;

  constructor(private readonly options: VexilTrackingOptions) {
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs ?? 2000);
    // A server process must not stay up for its tracker alone.
    (this.timer as { unref?: () => void }).unref?.();
  }

  track(eventName: string, context: Context = {}, details: Details = {}): void {
    const { targetingKey, ...attributes } = context;
    const value = typeof details.value === 'number' && Number.isFinite(details.value) ? details.value : undefined;
    this.held.push({
      event: eventName,
      ...(typeof targetingKey === 'string' && targetingKey !== '' ? { targetingKey } : {}),
      ...(Object.keys(attributes).length > 0 ? { context: attributes } : {}),
      ...(value === undefined ? {} : { value }),
    });
    const max = this.options.maxHeld ?? 10_000;
    if (this.held.length > max) this.held.splice(0, this.held.length - max);
    if (this.held.length >= BATCH) void this.flush();
  }

  /** Sends what is held, a batch at a time; resolves once sent (or given back to be tried again). */
  flush(): Promise<void> {
    this.sending ??= this.send().finally(() => {
      this.sending = undefined;
    });
    return this.sending;
  }

  private async send(): Promise<void> {
    while (this.held.length > 0) {
      const batch = this.held.splice(0, BATCH);
      try {
        const response = await fetch(`${this.options.url.replace(/\/$/, '')}/api/${this.options.api ?? 'client'}/track`, {
          method: 'POST',
          headers: { authorization: this.options.token, 'content-type': 'application/json' },
          body: JSON.stringify({ events: batch }),
        });
        // A 400 would be refused again: it is dropped (and told). Anything else is tried again later.
        if (response.status === 400) this.options.onError?.(new Error(`Vexil refused tracked events: ${await response.text()}`));
        else if (!response.ok) throw new Error(`Vexil answered ${response.status} to tracked events`);
      } catch (error) {
        this.held.unshift(...batch);
        this.options.onError?.(error);
        return;
      }
    }
  }

  /** Sends what is held and stops the timer. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/**
 * The provider with `track()` sending to Vexil; everything else is the provider's own. Closing it (OpenFeature.close)
 * sends what is held first.
 */
export function withVexilTracking<P extends object>(provider: P, options: VexilTrackingOptions): P & { tracker: VexilTracker } {
  const tracker = new VexilTracker(options);
  return new Proxy(provider, {
    get(target, property, receiver) {
      if (property === 'tracker') return tracker;
      if (property === 'track') return (name: string, context: Context, details: Details) => tracker.track(name, context, details);
      if (property === 'onClose') {
        const own = Reflect.get(target, property, receiver) as (() => Promise<void> | void) | undefined;
        return async () => {
          await tracker.close();
          await own?.call(target);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as P & { tracker: VexilTracker };
}

/** Sent without a time: Vexil's clock decides the phase, and a browser's clock may be minutes off. */
interface Exposure {
  featureName: string;
  variant?: string;
  context: Record<string, unknown>;
}

/** How often the hook asks which flags are in a running experiment. */
const EXPERIMENTS_REFRESH_MS = 30_000;

/**
 * An OpenFeature hook that sends an exposure each time the application evaluates a flag in a running experiment, so
 * that results count the units that saw the feature rather than every unit a page evaluated. Which flags are in an
 * experiment is asked of Vexil (`/api/<api>/experiments`) every 30 seconds. Each unit's exposure is sent once per flag;
 * Vexil evaluates it again and keeps the variant its engine gives.
 *
 *   OpenFeature.addHooks(vexilExposureHook({ url, token }));
 */
export function vexilExposureHook(options: VexilTrackingOptions) {
  const base = options.url.replace(/\/$/, '');
  const api = options.api ?? 'client';
  let running = new Set<string>();
  let askedAt = 0;
  let asking: Promise<void> | undefined;
  const sent = new Set<string>();
  let held: Exposure[] = [];
  let sending: Promise<void> | undefined;

  const ask = () => {
    askedAt = Date.now();
    asking ??= fetch(`${base}/api/${api}/experiments`, { headers: { authorization: options.token } })
      .then(async (answer) => {
        if (!answer.ok) throw new Error(`Vexil answered ${answer.status} to /api/${api}/experiments`);
        const body = (await answer.json()) as { experiments: Array<{ featureName: string }> };
        running = new Set(body.experiments.map((experiment) => experiment.featureName));
      })
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        asking = undefined;
      });
    return asking;
  };

  const flush = (): Promise<void> => {
    sending ??= (async () => {
      while (held.length > 0) {
        const batch = held.splice(0, BATCH);
        try {
          const answer = await fetch(`${base}/api/${api}/exposures`, {
            method: 'POST',
            headers: { authorization: options.token, 'content-type': 'application/json' },
            body: JSON.stringify({ exposures: batch }),
          });
          if (!answer.ok && answer.status !== 400) throw new Error(`Vexil answered ${answer.status} to exposures`);
        } catch (error) {
          held = [...batch, ...held].slice(-(options.maxHeld ?? 10_000));
          options.onError?.(error);
          return;
        }
      }
    })().finally(() => {
      sending = undefined;
    });
    return sending;
  };
  const timer = setInterval(() => void flush(), options.flushIntervalMs ?? 2000);
  (timer as { unref?: () => void }).unref?.();

  return {
    /** Resolves once the running experiments are known (the first evaluations need them). */
    ready: () => ask(),
    flush,
    close: async () => {
      clearInterval(timer);
      await flush();
    },
    after(hookContext: { flagKey: string; context: Context }, details: { variant?: string }) {
      if (Date.now() - askedAt > EXPERIMENTS_REFRESH_MS) void ask();
      if (!running.has(hookContext.flagKey)) return;
      const { targetingKey, ...attributes } = hookContext.context ?? {};
      // OFREP's reading of a context: the targeting key is the user id.
      const context: Record<string, unknown> = {
        ...attributes,
        ...(typeof targetingKey === 'string' && attributes.userId === undefined ? { userId: targetingKey } : {}),
      };
      const unit = `${hookContext.flagKey}:${String(context.userId ?? context.sessionId ?? JSON.stringify(context))}`;
      if (sent.has(unit)) return;
      if (sent.size > 100_000) sent.clear();
      sent.add(unit);
      held.push({
        featureName: hookContext.flagKey,
        ...(details.variant ? { variant: details.variant } : {}),
        context,
      });
      if (held.length >= BATCH) void flush();
    },
  };
}
