import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse } from 'yaml';
import { getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { featurePath } from '../helpers/projects.js';
import { runAdminCommand } from '../helpers/server-process.js';
import { ADMIN_TOKEN, useTestApp } from '../helpers/test-app.js';

/** Flags as code: `npm run admin -- apply -f flags.yaml` and `export`, run as CI would, against a listening Vexil. */
let url: string;
let workDir: string;
const ctx = useTestApp({}, async (app) => {
  url = await app.app.listen({ port: 0, host: '127.0.0.1' });
  workDir = await mkdtemp(join(tmpdir(), 'vexil-flags-cli-'));
});
after(() => rm(workDir, { recursive: true, force: true }));

async function fileWith(text: string): Promise<string> {
  const path = join(workDir, `${uniqueName('flags')}.yaml`);
  await writeFile(path, text);
  return path;
}

const cli = (...args: string[]) => runAdminCommand([...args, '--url', url, '--token', ADMIN_TOKEN], {});

function flagsYaml(project: string, flag: string, rollout = '25'): string {
  return `version: 1
segments:
  - name: ${project}-beta
    constraints:
      - contextName: userId
        operator: IN
        values: [u1, u2]
projects:
  - id: ${project}
    name: Checkout
    environments: [development, production]
    flags:
      - name: ${flag}
        type: release
        description: New checkout
        environments:
          production:
            enabled: true
            strategies:
              - name: flexibleRollout
                parameters: { rollout: "${rollout}", stickiness: default, groupId: ${flag} }
                segments: [${project}-beta]
`;
}

describe('apply -f', () => {
  test('shows what it changes, applies it, and a second apply changes nothing and records nothing', async () => {
    const project = uniqueName('cli');
    const flag = uniqueName('checkout');
    const file = await fileWith(flagsYaml(project, flag));

    const dry = await cli('apply', '-f', file, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, new RegExp(`\\+ created {2}flag "${flag}"`));
    assert.match(dry.stdout, /Dry run: nothing was written\./);
    assert.equal((await ctx.admin.get(featurePath(project, flag))).statusCode, 404);
    // CI detects drift: with --detailed-exitcode a plan with changes exits 2 (0 once nothing differs, below).
    const drift = await cli('apply', '-f', file, '--dry-run', '--detailed-exitcode');
    assert.equal(drift.code, 2, drift.stderr);
    assert.equal(drift.stdout, dry.stdout);

    const applied = await cli('apply', '-f', file);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, new RegExp(`~ updated {2}flag "${flag}" in "production": strategy added, enabled → true`));
    const feature = await getOk<{ description: string; environments: Array<{ name: string; enabled: boolean }> }>(
      ctx.admin,
      featurePath(project, flag),
    );
    assert.equal(feature.description, 'New checkout');
    assert.equal(feature.environments.find((e) => e.name === 'production')!.enabled, true);

    const before = await lastEventId(ctx);
    const again = await cli('apply', '-f', file);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, 'Nothing to change: the configuration already matches.\n');
    assert.equal((await cli('apply', '-f', file, '--dry-run', '--detailed-exitcode')).code, 0, 'no drift, exit 0');
    assert.deepEqual(await eventsSince(ctx, before), []);

    const changed = await cli('apply', '-f', await fileWith(flagsYaml(project, flag, '80')));
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(
      changed.stdout,
      new RegExp(`~ updated {2}flag "${flag}" in "production": strategy updated \\(flexibleRollout: rollout 25 → 80\\)`),
    );
  });

  test('an invalid entry is reported at its line and column of the file, and nothing is applied', async () => {
    const project = uniqueName('cli');
    const flag = uniqueName('checkout');
    const text = flagsYaml(project, flag).replace('operator: IN', 'operator: LIKE');
    const file = await fileWith(text);
    const result = await cli('apply', '-f', file);
    assert.equal(result.code, 1);
    const line = text.split('\n').findIndex((l) => l.includes('operator: LIKE')) + 1;
    assert.match(result.stderr, new RegExp(`${file.replaceAll('.', '\\.')}:${line}:\\d+: .*operator`));
    assert.match(result.stderr, /Nothing was applied\./);
    assert.equal((await ctx.admin.get(`/api/admin/projects/${project}`)).statusCode, 404);
  });

  test('a file that is not YAML, or not a flags file, says where and why', async () => {
    const broken = await cli('apply', '-f', await fileWith('version: 1\nprojects:\n  - id: [unclosed\n'));
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /\.yaml:\d+:\d+: /);
    const list = await cli('apply', '-f', await fileWith('- just\n- a list\n'));
    assert.equal(list.code, 1);
    assert.match(list.stderr, /a flags file is a mapping starting with "version: 1"/);
    const missing = await cli('apply', '-f', join(workDir, 'no-such.yaml'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Could not read .*no-such\.yaml/);
  });

  test('without --url and --token it says which to give; VEXIL_URL and VEXIL_TOKEN serve as well', async () => {
    const file = await fileWith(flagsYaml(uniqueName('cli'), uniqueName('checkout')));
    const bare = await runAdminCommand(['apply', '-f', file, '--dry-run'], {});
    assert.equal(bare.code, 1);
    assert.match(bare.stderr, /--url and --token \(or VEXIL_URL and VEXIL_TOKEN\)/);
    const fromEnvironment = await runAdminCommand(['apply', '-f', file, '--dry-run'], { VEXIL_URL: url, VEXIL_TOKEN: ADMIN_TOKEN });
    assert.equal(fromEnvironment.code, 0, fromEnvironment.stderr);
    const wrongToken = await runAdminCommand(['apply', '-f', file], { VEXIL_URL: url, VEXIL_TOKEN: '*:*.not-a-real-token-000000' });
    assert.equal(wrongToken.code, 1);
    assert.match(wrongToken.stderr, /Vexil refused the token \(401/);
    assert.doesNotMatch(wrongToken.stderr, /not-a-real-token/);
  });
});

describe('export', () => {
  test('writes the project as YAML with its schema, which applies back with no change', async () => {
    const project = uniqueName('cli');
    const flag = uniqueName('checkout');
    assert.equal((await cli('apply', '-f', await fileWith(flagsYaml(project, flag)))).code, 0);

    const exported = await cli('export', '--project', project);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stdout, new RegExp(`^# yaml-language-server: \\$schema=${url}/docs/flags-file\\.schema\\.json$`, 'm'));
    const document = parse(exported.stdout) as { projects: Array<{ id: string; flags: Array<{ name: string }> }> };
    assert.deepEqual(
      document.projects.map((p) => [p.id, p.flags.map((f) => f.name)]),
      [[project, [flag]]],
    );
    const before = await lastEventId(ctx);
    const reapplied = await cli('apply', '-f', await fileWith(exported.stdout));
    assert.equal(reapplied.stdout, 'Nothing to change: the configuration already matches.\n', reapplied.stderr);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an unknown option is refused with the usage', async () => {
    const result = await cli('export', '--everything');
    assert.equal(result.code, 1);
    assert.match(result.stderr, /Unknown option '--everything'/);
    assert.match(result.stderr, /Usage: npm run admin -- <command>/);
  });
});
