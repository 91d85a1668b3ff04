import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectStatus } from '../helpers/assertions.js';
import { callTool, connectMcp, personalToken, textOf, useMcpTestApp } from '../helpers/mcp-client.js';
import { createFlag, createProject, featurePath } from '../helpers/projects.js';

/*
 * get_flag_cleanup_patch, as a coding agent calls it with a Viewer's token: the files it has open go in, the patch that
 * keeps the branch production settled on comes out with the readiness reasons, and nothing in Vexil changes.
 */
const { ctx, clients, baseUrl } = useMcpTestApp();
const DAY_MS = 86_400_000;

const checkoutTs = (flag: string) => `import { unleash } from './unleash';

export function total(amount: number): number {
  if (unleash.isEnabled('${flag}')) {
    return amount * 0.9;
  }
  return amount;
}
`;
const checkoutPy = (flag: string) => `def total(client, amount):
    if not client.is_enabled("${flag}"):
        return amount
    return amount * 0.9
`;
/** The lines every patch of checkoutPy begins with: the negated check and its early return go. */
const pythonPatchStart = (flag: string) => [
  '--- a/app/checkout.py',
  '+++ b/app/checkout.py',
  '@@ -1,4 +1,2 @@',
  ' def total(client, amount):',
  `-    if not client.is_enabled("${flag}"):`,
  '-        return amount',
];
const checkoutGo = (flag: string) => `package shop

func Total(amount float64) float64 {
	if unleash.IsEnabled("${flag}") {
		return amount * 0.9
	}
	return amount
}
`;

async function eventCount(): Promise<number> {
  const response = await ctx.admin.get('/api/admin/events?limit=1');
  expectStatus(response, 200);
  return (response.json() as { totalEvents: number }).totalEvents;
}

describe('get_flag_cleanup_patch', () => {
  test('keeps the branch production settled on (its client import going with it), says why, lists what a person must change, and changes nothing', async () => {
    const project = await createProject(ctx, { prefix: 'clean' });
    const flag = await createFlag(ctx, project, { environment: 'production', strategies: [{ name: 'default' }] });
    ctx.clock.advance(22 * DAY_MS);
    const client = await connectMcp(baseUrl(), (await personalToken(ctx, 'Viewer')).token, clients);
    const eventsBefore = await eventCount();
    const files = [
      { path: 'src/checkout.ts', content: checkoutTs(flag) },
      { path: 'app/checkout.py', content: checkoutPy(flag) },
      { path: 'shop/total.go', content: checkoutGo(flag) },
      { path: 'README.md', content: `The ${flag} flag turns on the discount.` },
    ];
    const result = await callTool(client, 'get_flag_cleanup_patch', { featureName: flag, files });
    assert.equal(result.isError, undefined, textOf(result));
    const patch = [
      '--- a/src/checkout.ts',
      '+++ b/src/checkout.ts',
      '@@ -1,8 +1,3 @@',
      "-import { unleash } from './unleash';",
      '-',
      ' export function total(amount: number): number {',
      `-  if (unleash.isEnabled('${flag}')) {`,
      '-    return amount * 0.9;',
      '-  }',
      '-  return amount;',
      '+  return amount * 0.9;',
      ' }',
      ...pythonPatchStart(flag),
      '     return amount * 0.9',
      '',
    ].join('\n');
    const { url, ...answer } = result.structuredContent;
    assert.match(String(url), new RegExp(`/projects/${project}/flags/${flag}$`));
    assert.deepEqual(answer, {
      featureName: flag,
      project,
      readiness: [
        {
          environment: 'production',
          verdict: 'ready to remove (keep the on branch)',
          reasons: ['on for everyone in production for 22 days', 'never evaluated here', 'no pushed code reference known'],
        },
      ],
      keep: 'on',
      patch,
      changedFiles: ['src/checkout.ts', 'app/checkout.py'],
      leftForPerson: [
        {
          file: 'shop/total.go',
          line: 4,
          call: 'IsEnabled',
          reason: 'Vexil writes patches for TypeScript, JavaScript and Python; change this Go by hand',
        },
      ],
    });
    assert.match(textOf(result), /^production: ready to remove \(keep the on branch\) \(on for everyone in production for 22 days; /);
    assert.match(textOf(result), /Keeping the on branch \(as production settled\)\./);
    assert.match(textOf(result), /Left for a person:\n {2}shop\/total\.go:4 IsEnabled: /);
    assert.match(textOf(result), /Do not archive "[^"]+" yet: once the cleaned branch is pushed/);
    const stored = (await ctx.admin.get(featurePath(project, flag))).json() as { archived: boolean };
    assert.equal(stored.archived, false);
    assert.equal(await eventCount(), eventsBefore, 'a read records nothing');
  });

  test('where production has not settled it writes no patch until the branch is named, then keeps that one', async () => {
    const project = await createProject(ctx, { prefix: 'clean' });
    const rollout = { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'g' } };
    const flag = await createFlag(ctx, project, { environment: 'production', strategies: [rollout] });
    const client = await connectMcp(baseUrl(), (await personalToken(ctx, 'Viewer')).token, clients);
    const files = [{ path: 'app/checkout.py', content: checkoutPy(flag) }];
    const undecided = await callTool(client, 'get_flag_cleanup_patch', { featureName: flag, files });
    assert.equal(undecided.isError, undefined, textOf(undecided));
    assert.deepEqual(
      [undecided.structuredContent.keep, undecided.structuredContent.patch, undecided.structuredContent.readiness],
      [null, null, [{ environment: 'production', verdict: 'keep', reasons: ['it serves some users one way and some the other'] }]],
    );
    assert.match(textOf(undecided), /Production has not settled on one branch of "[^"]+", so no patch was written\./);
    const decided = await callTool(client, 'get_flag_cleanup_patch', { featureName: flag, files, keep: 'off', environment: 'production' });
    assert.equal(decided.structuredContent.keep, 'off');
    assert.equal(
      decided.structuredContent.patch,
      [...pythonPatchStart(flag), '-    return amount * 0.9', '+    return amount', ''].join('\n'),
    );
    assert.match(textOf(decided), /Keeping the off branch \(as asked\)\./);
  });

  test('files outside the repository, sent twice or too many, and an environment that is not production are refused', async () => {
    const project = await createProject(ctx, { prefix: 'clean' });
    const flag = await createFlag(ctx, project);
    const client = await connectMcp(baseUrl(), (await personalToken(ctx, 'Viewer')).token, clients);
    const file = { path: 'app/checkout.py', content: checkoutPy(flag) };
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ files: [{ path: '../etc/passwd', content: '' }] }, /BadDataError: files: "\.\.\/etc\/passwd" is not a path inside the repository/],
      [{ files: [{ path: '/etc/passwd', content: '' }] }, /is not a path inside the repository/],
      [{ files: [{ path: 'a//b.py', content: '' }] }, /is not a path inside the repository/],
      [{ files: [file, file] }, /BadDataError: files: "app\/checkout\.py" is sent twice/],
      [{ files: Array.from({ length: 201 }, (_, index) => ({ path: `f${index}.py`, content: '' })) }, /^Invalid arguments: files /],
      [{ files: [] }, /^Invalid arguments: files /],
      [{ files: [file], keep: 'maybe' }, /^Invalid arguments: keep /],
      [{ files: [file], wrappers: ['not a name'] }, /^Invalid arguments: wrappers\.0 /],
      [
        { files: [file], environment: 'development' },
        /BadDataError: environment: development is not a production environment of \S+ \(those are: production\)/,
      ],
    ];
    for (const [args, message] of refusals) {
      const result = await callTool(client, 'get_flag_cleanup_patch', { featureName: flag, ...args });
      assert.equal(result.isError, true, JSON.stringify(args).slice(0, 80));
      assert.match(textOf(result), message);
    }
  });
});
