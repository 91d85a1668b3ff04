// The official Node SDK's own evaluation engine (its client and built-in strategies), so that what Vexil
// evaluates for browsers and the playground is, bit for bit, what a server-side SDK would evaluate:
// the same murmurhash stickiness, rollout buckets, variant selection, constraint operators and dependencies.
import type clientModule from 'unleash-client/lib/client.js';
import type { Context } from 'unleash-client/lib/context.js';
import type { FeatureInterface } from 'unleash-client/lib/feature.js';
import type { Segment, Strategy } from 'unleash-client/lib/strategy/strategy.js';
import type { ClientFeature, ClientSegment, EnvironmentConfiguration } from '../client-features/environment-configuration.js';

/** What an evaluation reads besides the flags asked about: every flag (their parents) and segment of the environment. */
export type FlagConfiguration = Pick<EnvironmentConfiguration, 'features' | 'segments'>;

export interface SdkEngine {
  UnleashClient: typeof clientModule.default;
  /** The SDK's built-in strategies by name. */
  strategies: Map<string, Strategy>;
}

let engine: Promise<SdkEngine> | undefined;

/**
 * The SDK's engine, loaded on the first evaluation (a frontend API or playground request) rather than at
 * start-up, which many instances never need it for.
 */
export function sdkEngine(): Promise<SdkEngine> {
  engine ??= Promise.all([import('unleash-client/lib/client.js'), import('unleash-client/lib/strategy/index.js')]).then(
    ([client, { defaultStrategies }]) => ({
      // A CommonJS module with an `exports.default` class: Node's import gives the module object as `default`;
      // loaders that honour `__esModule` (tsx, in tests) give the class itself.
      UnleashClient:
        (client.default as { default?: typeof client.default.default }).default ??
        (client.default as unknown as typeof client.default.default),
      strategies: new Map(defaultStrategies.map((strategy) => [strategy.name, strategy])),
    }),
  );
  return engine;
}

export type { Context as EvaluationContext };

export interface EvaluatedToggle {
  name: string;
  enabled: boolean;
  variant: { name: string; enabled: boolean; payload?: { type: string; value: string }; feature_enabled: boolean; featureEnabled: boolean };
  impressionData: boolean;
}

/** The SDK's repository interface, over flags and segments already in memory. */
class InMemoryRepository {
  private readonly byName: Map<string, ClientFeature>;
  constructor(
    features: ClientFeature[],
    private readonly segments: Map<number, ClientSegment>,
  ) {
    this.byName = new Map(features.map((feature) => [feature.name, feature]));
  }
  getToggle(name: string): FeatureInterface | undefined {
    return this.byName.get(name) as unknown as FeatureInterface | undefined;
  }
  getToggles(): FeatureInterface[] {
    return [...this.byName.values()] as unknown as FeatureInterface[];
  }
  getSegment(id: number): Segment | undefined {
    return this.segments.get(id) as unknown as Segment | undefined;
  }
}

/**
 * One SDK client per configuration, built on its first evaluation and shared by every request until the next
 * change: building one indexes every flag of the environment. Keyed by the configuration's flag list, so a
 * client lives exactly as long as the configuration it reads.
 */
const clients = new WeakMap<ClientFeature[], Promise<InstanceType<SdkEngine['UnleashClient']>>>();

function clientOf(all: ClientFeature[], segments: Map<number, ClientSegment>) {
  let client = clients.get(all);
  if (!client) {
    client = sdkEngine().then(
      ({ UnleashClient, strategies }) => new UnleashClient(new InMemoryRepository(all, segments) as never, [...strategies.values()]),
    );
    clients.set(all, client);
  }
  return client;
}

/**
 * Evaluates every given flag for one context, as the SDK would with this configuration. `all` flags are
 * needed for dependencies: a child's parent may lie outside the flags asked about.
 */
export async function evaluateAll(
  features: ClientFeature[],
  configuration: FlagConfiguration,
  context: Context,
): Promise<EvaluatedToggle[]> {
  const client = await clientOf(configuration.features, configuration.segments);
  return features.map((feature) => {
    const variant = client.getVariant(feature.name, context);
    const enabled = variant.feature_enabled ?? false;
    return {
      name: feature.name,
      enabled,
      variant: {
        name: variant.name,
        enabled: variant.enabled,
        ...(variant.payload ? { payload: variant.payload as { type: string; value: string } } : {}),
        feature_enabled: enabled,
        featureEnabled: enabled,
      },
      impressionData: feature.impressionData,
    };
  });
}
