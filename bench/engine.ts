/**
 * The evaluation engine alone, in this process on one core, over the configuration a running Vexil serves (the
 * seeded bench data): flag evaluations per second for the flags that are on (the frontend API's work) and for
 * every flag (OFREP bulk's), and the same loop through the official Node SDK's engine for comparison.
 */
import type { ClientFeature, ClientSegment } from '../src/domain/client-features/environment-configuration.js';
import type { EvaluationContext } from '../src/domain/evaluation/context.js';
import { type CompiledFlag, engineFor, type FlagConfiguration } from '../src/domain/evaluation/engine.js';
import { sdkClientOf } from '../test/helpers/engine-differential.js';
import { createSdkToken } from './server.js';

const CONTEXTS = 2_000;
const SECONDS = 3;

function contexts(): EvaluationContext[] {
  return Array.from({ length: CONTEXTS }, (_, index) => ({
    userId: `user-${index}`,
    sessionId: `session-${index}`,
    appName: index % 2 === 0 ? 'web' : 'ios',
    environment: 'production',
    remoteAddress: `10.0.${index % 256}.${index % 200}`,
    properties: { plan: index % 3 === 0 ? 'pro' : 'free' },
  }));
}

/** Evaluations per second of `evaluate` over every (context, flag) pair, repeated for about SECONDS. */
function rate<Flag>(flags: Flag[], evaluate: (flag: Flag, context: EvaluationContext) => unknown): number {
  const all = contexts();
  let evaluations = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < SECONDS * 1000) {
    for (const context of all) for (const flag of flags) evaluate(flag, context);
    evaluations += all.length * flags.length;
    elapsed = performance.now() - started;
  }
  return (evaluations / elapsed) * 1000;
}

export async function engineLines(baseUrl: string, adminToken: string): Promise<string[]> {
  const secret = await createSdkToken(baseUrl, adminToken, 'client', 'engine');
  const response = await fetch(`${baseUrl}/api/client/features`, { headers: { authorization: secret } });
  const body = (await response.json()) as { features: ClientFeature[]; segments: ClientSegment[] };
  const configuration: FlagConfiguration = { features: body.features, segments: new Map(body.segments.map((s) => [s.id, s])) };
  const engine = engineFor(configuration);
  // As the frontend API and OFREP walk them: the scope's flags, compiled, in a list.
  const enabledFeatures = body.features.filter((feature) => feature.enabled);
  const on = engine.compiledList(enabledFeatures);
  const every = engine.compiledList(body.features);
  const byEngine = (flag: CompiledFlag, context: EvaluationContext) => engine.evaluate(flag, context);
  const sdk = sdkClientOf(configuration);
  const bySdk = (name: string, context: EvaluationContext) => sdk.getVariant(name, context as never);
  rate(on, byEngine); // warm-up: the first pass compiles and optimises
  const engineOn = rate(on, byEngine);
  const engineAll = rate(every, byEngine);
  const sdkOn = rate(
    enabledFeatures.map((feature) => feature.name),
    bySdk,
  );
  const figure = (perSecond: number) => `${Math.round(perSecond).toLocaleString('en')}/s`;
  return [
    `Evaluation engine alone, one core, ${body.features.length.toLocaleString('en')} flags (${on.length} on), ${CONTEXTS.toLocaleString('en')} contexts with a new userId each:`,
    `  Vexil's engine, the ${on.length} flags on: ${figure(engineOn)} flag evaluations (${(1e6 / engineOn).toFixed(2)} µs each)`,
    `  Vexil's engine, all ${body.features.length.toLocaleString('en')} flags: ${figure(engineAll)} flag evaluations`,
    `  unleash-client's engine (getVariant), the ${on.length} flags on: ${figure(sdkOn)} (${(engineOn / sdkOn).toFixed(1)}× slower than Vexil's)`,
  ];
}
