import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import type { ClientFeature, ClientSegment } from '../../src/domain/client-features/environment-configuration.js';
import { expectStatus } from '../helpers/assertions.js';
import { startTestEdge, type TestEdge } from '../helpers/edge.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Offline mode from a Vexil flags file: each environment's flags are served as a server that applied the same file
 * serves them (strategies and variants completed alike: rollout defaults, weights shared out, segments), and a file
 * with a mistake stops the edge with its place in the file.
 */
const project = uniqueName('offline');
const segment = uniqueName('beta');
const flags = { checkout: `${project}-checkout`, search: `${project}-search`, old: `${project}-old` };
const file = {
  version: 1,
  segments: [{ name: segment, constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2', '3'] }] }],
  projects: [
    {
      id: project,
      environments: ['development', 'production'],
      flags: [
        {
          name: flags.checkout,
          type: 'experiment',
          description: 'The new checkout',
          impressionData: true,
          environments: {
            development: {
              enabled: true,
              strategies: [
                {
                  name: 'flexibleRollout',
                  parameters: { rollout: 50 },
                  constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro', 'team'] }],
                  segments: [segment],
                  variants: [
                    { name: 'a', weight: 0, payload: { type: 'string', value: 'A' } },
                    { name: 'b', weight: 0 },
                  ],
                },
                { name: 'default', disabled: true },
              ],
              variants: [
                { name: 'blue', weight: 0 },
                { name: 'green', weight: 300, weightType: 'fix', stickiness: 'userId' },
              ],
            },
            production: { enabled: false, strategies: [{ name: 'default', title: 'Everyone' }] },
          },
        },
        {
          name: flags.search,
          dependencies: [{ feature: flags.checkout, variants: ['a'] }],
          environments: { development: { enabled: true, strategies: [{ name: 'userWithId', parameters: { userIds: 'alice,bob' } }] } },
        },
        { name: flags.old, archived: true, environments: { development: { enabled: true, strategies: [{ name: 'default' }] } } },
      ],
    },
  ],
};

let ctx: TestApp;
let folder: string;
let edge: TestEdge;
const TOKENS = { development: '*:development.offline-flags-file-dev', production: '*:production.offline-flags-file-prod' };

/** What SDKs read, with what only a database makes (strategy ids, segment ids) replaced by what they stand for. */
function comparable(answer: { features: ClientFeature[]; segments: ClientSegment[] }) {
  const names = new Map(answer.segments.map((s) => [s.id, s.name]));
  return {
    features: answer.features
      .filter((feature) => feature.project === project)
      .map((feature) => ({
        ...feature,
        strategies: feature.strategies.map(({ id: _id, segments, ...strategy }) => ({
          ...strategy,
          ...(segments ? { segments: segments.map((id) => names.get(id)) } : {}),
        })),
      })),
    segments: answer.segments.filter((s) => s.name === segment).map(({ id: _id, ...rest }) => rest),
  };
}

before(async () => {
  ctx = await startTestApp();
  expectStatus(await ctx.admin.post('/api/admin/flags-file/apply', file), 200);
  folder = await mkdtemp(join(tmpdir(), 'vexil-edge-flags-file-'));
  await writeFile(join(folder, 'flags.yaml'), stringify(file));
  edge = await startTestEdge({
    BOOTSTRAP_FILE: join(folder, 'flags.yaml'),
    CLIENT_TOKENS: `${TOKENS.development},${TOKENS.production}`,
  });
});

after(async () => {
  await edge?.close();
  await ctx?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

test('each environment of a flags file is served as the server that applied it serves it', async () => {
  for (const environment of ['development', 'production'] as const) {
    const fromServer = (await ctx.as(await createSdkToken(ctx, 'client', environment, [project])).get('/api/client/features')).json() as {
      features: ClientFeature[];
      segments: ClientSegment[];
    };
    const fromEdge = (await (
      await fetch(`${edge.url}/api/client/features?project=${project}`, { headers: { authorization: TOKENS[environment] } })
    ).json()) as { features: ClientFeature[]; segments: ClientSegment[] };
    assert.deepEqual(comparable(fromEdge), comparable(fromServer), environment);
    assert.deepEqual(
      fromEdge.features.map((feature) => feature.name),
      [flags.checkout, flags.search],
      'the archived flag is left out',
    );
  }
});

test('a flags file with a mistake stops the edge, naming its place in the file', async () => {
  const broken = structuredClone(file);
  (broken.projects[0]!.flags[0]!.environments!.development!.strategies![0] as { segments: string[] }).segments = ['no-such-segment'];
  await writeFile(join(folder, 'broken.yaml'), stringify(broken));
  await assert.rejects(
    startTestEdge({ BOOTSTRAP_FILE: join(folder, 'broken.yaml'), CLIENT_TOKENS: TOKENS.development }),
    /broken\.yaml .*\/projects\/0\/flags\/0\/environments\/development\/strategies\/0\/segments\/0: the file has no segment "no-such-segment"/,
  );
  await writeFile(join(folder, 'weights.yaml'), stringify(file).replace('weight: 300', 'weight: 3000'));
  await assert.rejects(
    startTestEdge({ BOOTSTRAP_FILE: join(folder, 'weights.yaml'), CLIENT_TOKENS: TOKENS.development }),
    /weights\.yaml is a flags file SDKs cannot be served from/,
  );
});
