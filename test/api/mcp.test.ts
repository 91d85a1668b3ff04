import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expectStatus } from '../helpers/assertions.js';
import { enableChangeRequests } from '../helpers/change-requests.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import { callTool, connectMcp, personalToken as personalTokenOf, textOf } from '../helpers/mcp-client.js';
import { useTestApp } from '../helpers/test-app.js';

// Vexil's MCP server driven by the official MCP SDK's client over Streamable HTTP, as Claude Code or Cursor drive it:
// every tool call runs as the token's identity through the same commands as the API, and the events it causes say
// which client it came through.

let baseUrl = '';
const ctx = useTestApp({}, async (app) => {
  baseUrl = await app.app.listen({ port: 0, host: '127.0.0.1' });
});
const clients: Client[] = [];
const MEMBER = 5;

after(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

const personalToken = (rootRole: 'Admin' | 'Editor' | 'Viewer') => personalTokenOf(ctx, rootRole);
const connect = (token: string, clientInfo?: { name: string; version: string }) => connectMcp(baseUrl, token, clients, clientInfo);
const call = callTool;

describe('MCP over Streamable HTTP', () => {
  test("lists Unleash MCP's tools and Vexil's own, with schemas and annotations that mark the destructive ones", async () => {
    const client = await connect((await personalToken('Editor')).token);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name).sort();
    assert.deepEqual(names, [
      'change_request_status',
      'cleanup_flag',
      'create_experiment',
      'create_flag',
      'detect_flag',
      'evaluate',
      'evaluate_change',
      'flag_usage',
      'get_experiment_results',
      'get_flag_cleanup_patch',
      'get_flag_code_references',
      'get_flag_state',
      'get_removal_readiness',
      'list_flags',
      'list_projects',
      'open_change_request',
      'remove_flag_strategy',
      'search_events',
      'set_flag_rollout',
      'ship_experiment_variant',
      'stale_flags',
      'toggle_flag_environment',
      'update_flag_strategy',
      'wrap_change',
    ]);
    const destructive = tools
      .filter((tool) => tool.annotations?.destructiveHint)
      .map((tool) => tool.name)
      .sort();
    assert.deepEqual(destructive, ['cleanup_flag', 'remove_flag_strategy']);
    const readOnly = tools.filter((tool) => tool.annotations?.readOnlyHint).map((tool) => tool.name);
    assert.ok(readOnly.includes('get_flag_state') && !readOnly.includes('create_flag'));
    const create = tools.find((tool) => tool.name === 'create_flag')!;
    assert.deepEqual((create.inputSchema as { required?: string[] }).required?.sort(), ['description', 'name', 'type']);
  });

  test('an Editor creates a flag, rolls it out and turns it on; the SDK sees it and the events name the client', async () => {
    const project = await createProject(ctx, { environments: ['development', 'production'] });
    const editor = await personalToken('Editor');
    const client = await connect(editor.token);
    const name = uniqueName('mcp-flag');

    const created = await call(client, 'create_flag', { projectId: project, name, type: 'release', description: 'New checkout page' });
    assert.equal(created.isError, undefined, textOf(created));
    assert.equal(created.structuredContent.url, `${ctx.config.baseUrl.replace(/\/$/, '')}/projects/${project}/flags/${name}`);
    const rollout = await call(client, 'set_flag_rollout', { featureName: name, environment: 'development', rolloutPercentage: 100 });
    assert.equal(rollout.structuredContent.applied, true, textOf(rollout));
    const toggled = await call(client, 'toggle_flag_environment', { featureName: name, environment: 'development', enabled: true });
    assert.equal(toggled.structuredContent.applied, true, textOf(toggled));

    const state = await call(client, 'get_flag_state', { featureName: name, environment: 'development' });
    const [development] = state.structuredContent.environments as Array<{
      name: string;
      enabled: boolean;
      strategies: Array<{ name: string; parameters: Record<string, string> }>;
    }>;
    assert.equal(development!.enabled, true);
    assert.deepEqual(
      development!.strategies.map((s) => [s.name, s.parameters.rollout]),
      [['flexibleRollout', '100']],
    );

    const token = await createSdkToken(ctx, 'client', 'development', [project]);
    const sdk = await startNodeSdk(baseUrl, token);
    try {
      assert.equal(sdk.isEnabled(name, { userId: 'u1' }), true);
    } finally {
      sdk.destroy();
    }

    const events = await ctx.admin.get(`/api/admin/search/events?feature=IS:${name}`);
    const recorded = (events.json() as { events: Array<{ type: string; createdByUserId: number; via?: string }> }).events;
    assert.deepEqual(recorded.map((e) => e.type).sort(), ['feature-created', 'feature-environment-enabled', 'feature-strategy-add'].sort());
    for (const event of recorded) {
      assert.equal(event.createdByUserId, editor.id);
      assert.equal(event.via, 'Claude Code 1.2.3');
    }
    const byAgent = await ctx.admin.get(`/api/admin/search/events?via=claude&feature=IS:${name}`);
    assert.equal((byAgent.json() as { total: number }).total, 3);
    const byOther = await ctx.admin.get(`/api/admin/search/events?via=cursor&feature=IS:${name}`);
    assert.equal((byOther.json() as { total: number }).total, 0);
  });

  test('update_flag_strategy keeps what it is not given, and remove_flag_strategy removes the strategy', async () => {
    const project = await createProject(ctx);
    const constraint = { contextName: 'region', operator: 'IN', values: ['eu'], inverted: false, caseInsensitive: false };
    const rollout = {
      name: 'flexibleRollout',
      constraints: [constraint],
      parameters: { rollout: '10', stickiness: 'default', groupId: 'g' },
    };
    const flag = await createFlag(ctx, project, { strategies: [rollout] });
    const client = await connect((await personalToken('Editor')).token);
    const strategiesOf = async () => {
      const state = await call(client, 'get_flag_state', { featureName: flag, environment: 'development' });
      return (
        state.structuredContent.environments as Array<{
          strategies: Array<{ id: string; name: string; title: string | null; parameters: Record<string, string>; constraints: unknown[] }>;
        }>
      )[0]!.strategies;
    };
    const [before] = await strategiesOf();
    const updated = await call(client, 'update_flag_strategy', {
      featureName: flag,
      environment: 'development',
      strategyId: before!.id,
      parameters: { rollout: '30', stickiness: 'default', groupId: 'g' },
      title: 'Thirty',
    });
    assert.equal(updated.structuredContent.applied, true, textOf(updated));
    const [after] = await strategiesOf();
    assert.deepEqual([after!.id, after!.name, after!.title, after!.parameters.rollout], [before!.id, 'flexibleRollout', 'Thirty', '30']);
    assert.deepEqual(after!.constraints, before!.constraints);

    const removed = await call(client, 'remove_flag_strategy', { featureName: flag, environment: 'development', strategyId: before!.id });
    assert.equal(removed.structuredContent.applied, true, textOf(removed));
    assert.deepEqual(await strategiesOf(), []);
  });

  test('get_flag_code_references tells an agent where code reads a flag, and when none does any more; get_removal_readiness whether it may go', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(ctx, project);
    const repository = uniqueName('acme/agent');
    const push = (commit: string, files: string[]) =>
      ctx.admin.post('/api/admin/code-references', {
        repository,
        branch: 'main',
        commit,
        references: files.map((file) => ({ flag, file, line: 3, language: 'Python', call: 'is_enabled', expression: `"${flag}"` })),
      });
    expectStatus(await push('aaaaaaa', ['app/views.py', 'app/tasks.py']), 200);
    const client = await connect((await personalToken('Viewer')).token);
    const found = await call(client, 'get_flag_code_references', { featureName: flag });
    assert.equal(
      textOf(found).trimEnd(),
      `2 references to ${flag}:\n${repository} (main) app/tasks.py:3 is_enabled("${flag}")\n${repository} (main) app/views.py:3 is_enabled("${flag}")`,
    );
    assert.equal(found.structuredContent.total, 2);
    expectStatus(await push('bbbbbbb', []), 200);
    const gone = await call(client, 'get_flag_code_references', { featureName: flag });
    const readiness = await call(client, 'get_removal_readiness', { featureName: flag });
    assert.equal(
      textOf(readiness).trimEnd(),
      `production: ready to archive (no pushed code reads it since commit bbbbbbb of ${repository}; never evaluated here)`,
    );
    assert.equal(
      textOf(gone).trimEnd(),
      `No code reads ${flag} any more: its last reference left in commit bbbbbbb of ${repository} (main).`,
    );
  });

  test("a Viewer's token reads, but every write tool is refused with the permission named, and nothing changes", async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(ctx, project, { strategies: [{ name: 'default' }] });
    const client = await connect((await personalToken('Viewer')).token);
    const read = await call(client, 'get_flag_state', { featureName: flag });
    assert.equal(read.isError, undefined);
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['create_flag', { projectId: project, name: uniqueName('no'), type: 'release', description: 'x' }, 'CREATE_FEATURE'],
      ['toggle_flag_environment', { featureName: flag, environment: 'development', enabled: false }, 'UPDATE_FEATURE_ENVIRONMENT'],
      ['set_flag_rollout', { featureName: flag, environment: 'development', rolloutPercentage: 5 }, 'CREATE_FEATURE_STRATEGY'],
      ['cleanup_flag', { flagName: flag, archive: true }, 'DELETE_FEATURE'],
    ];
    for (const [tool, args, permission] of refusals) {
      const result = await call(client, tool, args);
      assert.equal(result.isError, true, tool);
      assert.equal(result.structuredContent.name, 'PermissionError', tool);
      assert.deepEqual(result.structuredContent.permissions, [permission], tool);
      assert.match(textOf(result), new RegExp(permission));
    }
    const stored = (await ctx.admin.get(featurePath(project, flag))).json() as {
      archived: boolean;
      environments: Array<{ name: string; enabled: boolean; strategies: unknown[] }>;
    };
    assert.equal(stored.archived, false);
    const development = stored.environments.find((env) => env.name === 'development')!;
    assert.equal(development.enabled, true);
    assert.equal(development.strategies.length, 1);
  });

  test('a custom role that may change development only: the tools act there and are refused in production', async () => {
    const project = await createProject(ctx, { environments: ['development', 'production'] });
    const role = await ctx.admin.post('/api/admin/roles', {
      name: uniqueName('Developer'),
      type: 'custom',
      permissions: [
        { name: 'CREATE_FEATURE' },
        { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' },
        { name: 'CREATE_FEATURE_STRATEGY', environment: 'development' },
      ],
    });
    expectStatus(role, 201);
    const developer = await personalToken('Viewer');
    expectStatus(
      await ctx.admin.put(`${projectPath(project)}/users/${developer.id}/roles`, { roles: [(role.json() as { id: number }).id] }),
      200,
    );
    const client = await connect(developer.token);
    const name = uniqueName('scoped');
    assert.equal((await call(client, 'create_flag', { projectId: project, name, type: 'release', description: 'x' })).isError, undefined);
    const development = await call(client, 'set_flag_rollout', { featureName: name, environment: 'development', rolloutPercentage: 50 });
    assert.equal(development.structuredContent.applied, true, textOf(development));
    for (const [tool, args, permission] of [
      ['set_flag_rollout', { featureName: name, environment: 'production', rolloutPercentage: 50 }, 'CREATE_FEATURE_STRATEGY'],
      ['toggle_flag_environment', { featureName: name, environment: 'production', enabled: true }, 'UPDATE_FEATURE_ENVIRONMENT'],
    ] as const) {
      const refused = await call(client, tool, args);
      assert.deepEqual(refused.structuredContent.permissions, [permission], tool);
    }
    const stored = (await ctx.admin.get(featurePath(project, name))).json() as {
      environments: Array<{ name: string; enabled: boolean; strategies: unknown[] }>;
    };
    assert.deepEqual(
      stored.environments.map((env) => [env.name, env.enabled, env.strategies.length]),
      [
        ['development', false, 1],
        ['production', false, 0],
      ],
    );
  });

  test('a toggle in a protected environment makes a draft change request, which open_change_request sends for review', async () => {
    const project = await createProject(ctx, { environments: ['development', 'production'] });
    await enableChangeRequests(ctx, project);
    const flag = await createFlag(ctx, project);
    const client = await connect((await personalToken('Editor')).token);

    const result = await call(client, 'toggle_flag_environment', { featureName: flag, environment: 'production', enabled: true });
    assert.equal(result.structuredContent.applied, false);
    const id = result.structuredContent.changeRequestId as number;
    assert.match(textOf(result), new RegExp(`change request #${id}`));
    assert.equal(
      result.structuredContent.changeRequestUrl,
      `${ctx.config.baseUrl.replace(/\/$/, '')}/projects/${project}/change-requests/${id}`,
    );
    const stored = (await ctx.admin.get(featurePath(project, flag))).json() as { environments: Array<{ name: string; enabled: boolean }> };
    assert.equal(stored.environments.find((env) => env.name === 'production')!.enabled, false);

    const opened = await call(client, 'open_change_request', { projectId: project, environment: 'production', title: 'Launch' });
    assert.equal(opened.isError, undefined, textOf(opened));
    const status = await call(client, 'change_request_status', { projectId: project, id });
    assert.equal(status.structuredContent.state, 'In review');
    assert.equal(status.structuredContent.title, 'Launch');
    assert.deepEqual(status.structuredContent.changes, [{ feature: flag, action: 'updateEnabled' }]);
    const request = (await ctx.admin.get(`${projectPath(project)}/change-requests/${id}`)).json() as { state: string };
    assert.equal(request.state, 'In review');
    const resource = await client.readResource({ uri: `vexil://projects/${project}` });
    const read = JSON.parse((resource.contents[0] as { text: string }).text) as {
      id: string;
      environments: string[];
      changeRequestEnvironments: string[];
    };
    assert.deepEqual(
      [read.id, read.environments, read.changeRequestEnvironments],
      [project, ['development', 'production'], ['production']],
    );
  });

  test("no tool shows a private project's flags to a token of someone who is no member of it", async () => {
    const secret = uniqueName('private');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: secret, name: secret, mode: 'private' }), 201);
    const hiddenFlag = await createFlag(ctx, secret, { name: uniqueName('hidden-checkout'), strategies: [{ name: 'default' }] });
    const outsider = await connect((await personalToken('Editor')).token);
    const member = await personalToken('Viewer');
    expectStatus(await ctx.admin.put(`${projectPath(secret)}/users/${member.id}/roles`, { roles: [MEMBER] }), 200);
    const insider = await connect(member.token);

    const projects = (await call(outsider, 'list_projects', {})).structuredContent.projects as Array<{ id: string }>;
    assert.equal(
      projects.some((p) => p.id === secret),
      false,
    );
    const flags = (await call(outsider, 'list_flags', { query: hiddenFlag })).structuredContent.flags as Array<{ name: string }>;
    assert.deepEqual(flags, []);
    for (const [tool, args] of [
      ['get_flag_state', { featureName: hiddenFlag }],
      ['flag_usage', { featureName: hiddenFlag }],
      ['get_flag_code_references', { featureName: hiddenFlag }],
      ['get_removal_readiness', { featureName: hiddenFlag }],
      ['get_flag_cleanup_patch', { featureName: hiddenFlag, files: [{ path: 'a.ts', content: `isEnabled('${hiddenFlag}')` }], keep: 'on' }],
      ['search_events', { featureName: hiddenFlag }],
      ['toggle_flag_environment', { featureName: hiddenFlag, environment: 'development', enabled: false }],
      ['list_flags', { projectId: secret }],
    ] as const) {
      const result = await call(outsider, tool, args);
      assert.equal(result.structuredContent.name, 'NotFoundError', tool);
    }
    const evaluated = (await call(outsider, 'evaluate', { environment: 'development', context: { userId: 'u' } })).structuredContent
      .results as Array<{ name: string }>;
    assert.equal(
      evaluated.some((r) => r.name === hiddenFlag),
      false,
    );
    const detected = (await call(outsider, 'detect_flag', { description: 'checkout', codeContext: `isEnabled('${hiddenFlag}')` }))
      .structuredContent.candidates as Array<{ name: string }>;
    assert.equal(
      detected.some((c) => c.name === hiddenFlag),
      false,
    );
    const resources = await outsider.listResources();
    assert.equal(
      resources.resources.some((r) => r.name === hiddenFlag),
      false,
    );
    await assert.rejects(outsider.readResource({ uri: `vexil://flags/${secret}/${hiddenFlag}` }), /Could not find project/);
    await assert.rejects(outsider.readResource({ uri: `vexil://projects/${secret}` }), /Could not find project/);
    assert.equal(
      resources.resources.some((r) => r.uri === `vexil://projects/${secret}`),
      false,
    );
    assert.equal(
      (await insider.listResources()).resources.some((r) => r.uri === `vexil://projects/${secret}`),
      true,
    );

    const seen = (await call(insider, 'get_flag_state', { featureName: hiddenFlag })).structuredContent;
    assert.equal(seen.name, hiddenFlag);
    const read = await insider.readResource({ uri: `vexil://flags/${secret}/${hiddenFlag}` });
    assert.equal(JSON.parse((read.contents[0] as { text: string }).text).name, hiddenFlag);
  });

  test('bad arguments are refused with the argument named, and nothing is created', async () => {
    const client = await connect((await personalToken('Editor')).token);
    const bad = await call(client, 'create_flag', { name: 'has spaces', type: 'release', description: 'x' });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /Invalid arguments: name/);
    const unknownType = await call(client, 'create_flag', { name: uniqueName('ok'), type: 'nonsense', description: 'x' });
    assert.match(textOf(unknownType), /Invalid arguments: type/);
    const extra = await call(client, 'toggle_flag_environment', {
      featureName: 'x',
      environment: 'development',
      enabled: true,
      __proto__x: 1,
    });
    assert.match(textOf(extra), /Invalid arguments/);
    const searched = await ctx.admin.get('/api/admin/search/features?query=has spaces');
    assert.equal((searched.json() as { total: number }).total, 0);
  });

  test('a session belongs to the token that opened it, a cookie is no way in, and GET offers no stream', async () => {
    const first = await connect((await personalToken('Editor')).token);
    const sessionId = (first as unknown as { _transport: { sessionId: string } })._transport.sessionId;
    const other = (await personalToken('Editor')).token;
    const hijack = await fetch(`${baseUrl}/api/admin/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${other}`,
        'mcp-session-id': sessionId,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(hijack.status, 404);
    const person = await createUserSession(ctx, 'Admin');
    const byCookie = await ctx.withCookie(person.cookie).post('/api/admin/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(byCookie.statusCode, 401);
    const stream = await fetch(`${baseUrl}/api/admin/mcp`, { headers: { authorization: `Bearer ${other}`, accept: 'text/event-stream' } });
    assert.equal(stream.status, 405);
  });
});

describe('MCP over stdio (vexil mcp)', () => {
  test('a client that starts the command lists the tools, creates and turns on a flag, and the events name it', async () => {
    const project = await createProject(ctx);
    const editor = await personalToken('Editor');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/cli/vexil.ts', 'mcp'],
      env: { PATH: process.env.PATH ?? '', VEXIL_URL: baseUrl, VEXIL_TOKEN: editor.token },
      stderr: 'pipe',
    });
    const protocolErrors: Error[] = [];
    const client = new Client({ name: 'Cursor', version: '0.9.1' });
    client.onerror = (error) => protocolErrors.push(error);
    await client.connect(transport);
    clients.push(client);
    const name = uniqueName('stdio-flag');
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'toggle_flag_environment'));
      const created = await call(client, 'create_flag', {
        projectId: project,
        name,
        type: 'kill-switch',
        description: 'Fallback for the payment provider',
      });
      assert.equal(created.isError, undefined, textOf(created));
      const toggled = await call(client, 'toggle_flag_environment', { featureName: name, environment: 'development', enabled: true });
      assert.equal(toggled.structuredContent.applied, true, textOf(toggled));
    } finally {
      await client.close();
    }
    // Anything but protocol on stdout would have been reported as a parse error.
    assert.deepEqual(protocolErrors, []);
    const events = (await ctx.admin.get(`/api/admin/search/events?feature=IS:${name}`)).json() as {
      events: Array<{ type: string; via?: string; createdByUserId: number }>;
    };
    assert.deepEqual(events.events.map((e) => [e.type, e.via, e.createdByUserId]).sort(), [
      ['feature-created', 'Cursor 0.9.1', editor.id],
      ['feature-environment-enabled', 'Cursor 0.9.1', editor.id],
      ['feature-strategy-add', 'Cursor 0.9.1', editor.id],
    ]);
  });
});

describe("the MCP Inspector's command line, a client nobody here wrote", () => {
  const inspector = 'node_modules/.bin/mcp-inspector';

  async function inspect(token: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(
      inspector,
      ['--cli', `${baseUrl}/api/admin/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          MCP_CATALOG_PATH: `/tmp/vexil-inspector-${process.pid}.json`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  }

  test('lists the tools and calls one against a running Vexil', {
    skip: existsSync(inspector) ? false : 'the MCP Inspector is not installed (npm ci installs it)',
  }, async () => {
    const editor = await personalToken('Editor');
    const listed = await inspect(editor.token, ['--method', 'tools/list']);
    assert.equal(listed.code, 0, listed.stderr);
    const { tools } = JSON.parse(listed.stdout) as { tools: Array<{ name: string }> };
    assert.ok(tools.some((tool) => tool.name === 'create_flag') && tools.some((tool) => tool.name === 'cleanup_flag'));

    const project = await createProject(ctx);
    const name = uniqueName('inspected');
    const called = await inspect(editor.token, [
      '--method',
      'tools/call',
      '--tool-name',
      'create_flag',
      '--tool-arg',
      `projectId=${project}`,
      `name=${name}`,
      'type=release',
      'description=Made by the inspector',
    ]);
    assert.equal(called.code, 0, called.stderr);
    const answer = JSON.parse(called.stdout) as { structuredContent: { name: string; project: string } };
    assert.deepEqual([answer.structuredContent.name, answer.structuredContent.project], [name, project]);
    const stored = (await ctx.admin.get(featurePath(project, name))).json() as { description: string };
    assert.equal(stored.description, 'Made by the inspector');
  });
  test('an agent runs an experiment: starts it on the variants, reads the results, ships the winner through the strategy', async () => {
    const variants = ['a', 'b'].map((name) => ({ name, weight: 500, weightType: 'variable', stickiness: 'userId' }));
    const flag = await createFlag(ctx, 'default', {
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'userId', groupId: 'mcp-exp' }, variants }],
    });
    const metric = uniqueName('signup');
    expectStatus(
      await ctx.admin.post('/api/admin/environments/development/experiment-metrics', { name: metric, kind: 'proportion', event: 'signup' }),
      201,
    );
    const client = await connect((await personalToken('Editor')).token);
    const name = uniqueName('agent-exp');
    const created = await call(client, 'create_experiment', { featureName: flag, environment: 'development', name, goalMetrics: [metric] });
    assert.equal(created.structuredContent.status, 'running', textOf(created));
    const token = await createSdkToken(ctx, 'client', 'development');
    const users = Array.from({ length: 400 }, (_, i) => `agent-user-${i}`);
    expectStatus(
      await ctx.as(token).post('/api/client/exposures', { exposures: users.map((userId) => ({ featureName: flag, context: { userId } })) }),
      202,
    );
    ctx.clock.advance(60_000);
    expectStatus(
      await ctx.as(token).post('/api/client/track', {
        events: users.filter((_, i) => i % 3 === 0).map((userId) => ({ event: 'signup', context: { userId } })),
      }),
      202,
    );
    ctx.clock.advance(60_000);
    const results = await call(client, 'get_experiment_results', { experimentName: name });
    assert.equal(results.isError, undefined, textOf(results));
    assert.deepEqual(
      (results.structuredContent.exposures as Array<{ units: number }>).reduce((sum, arm) => sum + arm.units, 0),
      400,
    );
    assert.match(textOf(results), new RegExp(`${metric} \\(goal\\) b vs a: -?\\d+\\.\\d% \\[`));
    const shipped = await call(client, 'ship_experiment_variant', { experimentName: name, variant: 'b' });
    assert.deepEqual([shipped.structuredContent.status, shipped.structuredContent.shippedVariant], ['shipped', 'b'], textOf(shipped));
    const strategies = (await ctx.admin.get(`${featurePath('default', flag)}/environments/development/strategies`)).json() as Array<{
      variants: Array<{ name: string; weight: number }>;
    }>;
    assert.deepEqual(
      strategies[0]!.variants.map((variant) => [variant.name, variant.weight]),
      [['b', 1000]],
    );
  });
});
