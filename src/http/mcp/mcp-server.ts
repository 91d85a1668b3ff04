import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ValidateFunction } from 'ajv';
import type { FastifyBaseLogger } from 'fastify';
import type { Actor } from '../../db/unit-of-work.js';
import { authorize } from '../../domain/access/authorize.js';
import { projectsHiddenFrom } from '../../domain/access/project-visibility.js';
import { getFeature } from '../../domain/features/features.js';
import { getProject, listProjects } from '../../domain/projects/projects.js';
import { protectedEnvironmentsOf } from '../../domain/protected-environments/protection.js';
import { searchFeatures } from '../../domain/search/feature-search.js';
import { translateDatabaseError } from '../../db/pg-errors.js';
import { ApiError } from '../../shared/errors.js';
import type { RouteDeps } from '../deps.js';
import type { McpSessions } from './mcp-sessions.js';
import { MCP_TOOLS } from './mcp-tools.js';
import { authorizeToolCall, type McpTool, type ToolAnswer, toolUnitOfWork } from './tools/tool.js';
import { compileJsonValidator } from '../plugins/validation.js';

/** What the route hands the protocol with each HTTP request: the caller as authenticated for that request. */
export interface McpCaller extends AuthInfo {
  extra: { actor: Actor; owner: string };
}

const SERVER_INFO = { name: 'vexil', title: 'Vexil feature flags', version: '1.0.0' };

const INSTRUCTIONS =
  'Vexil manages feature flags. Before wrapping a change in a flag: evaluate_change (does it need one, which type), detect_flag (reuse an existing one), ' +
  'create_flag, wrap_change (the code), then set_flag_rollout or toggle_flag_environment. Changes to environments that require change requests go into ' +
  "your draft change request: send it with open_change_request. When a flag's code path has won, get_flag_cleanup_patch (the patch for the " +
  'files you have open), then cleanup_flag with archive: true once the cleaned code is pushed. Every change is recorded under your ' +
  'identity and this client.';

/** The agent a change comes through, as its client introduced itself, bounded and printable. */
export function agentName(client: { name: string; version: string } | undefined): string {
  if (!client) return 'an MCP client';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return `${printable(client.name).slice(0, 60) || 'an MCP client'} ${printable(client.version).slice(0, 30)}`.trim();
}

const validators = new WeakMap<McpTool, ValidateFunction>();
function validatorOf(tool: McpTool): ValidateFunction {
  let validate = validators.get(tool);
  if (!validate) {
    validate = compileJsonValidator(tool.input);
    validators.set(tool, validate);
  }
  return validate;
}

const toolResult = (answer: ToolAnswer): CallToolResult => ({
  content: [
    { type: 'text', text: answer.text },
    ...(answer.link ? [{ type: 'resource_link' as const, uri: answer.link, name: 'Open in Vexil', mimeType: 'text/html' }] : []),
  ],
  structuredContent: { ...answer.structured, ...(answer.link ? { url: answer.link } : {}) },
});

const toolError = (text: string, details: Record<string, unknown> = {}): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text }],
  structuredContent: { error: text, ...details },
});

function callerOf(authInfo: AuthInfo | undefined): McpCaller['extra'] {
  const extra = authInfo?.extra as McpCaller['extra'] | undefined;
  if (!extra?.actor) throw new McpError(ErrorCode.InvalidRequest, 'The request carried no authenticated caller');
  return extra;
}

const FLAG_URI = /^vexil:\/\/flags\/([^/]+)\/([^/]+)$/;
const PROJECT_URI = /^vexil:\/\/projects\/([^/]+)$/;

async function protectedEnvironmentNames(db: RouteDeps['db'], project: string): Promise<string[]> {
  return (await protectedEnvironmentsOf(db, [project])).map((row) => row.environment);
}

/**
 * The MCP server of one session: the tools, flags as resources and the workflow prompt. Each call runs as the caller
 * of the HTTP request that carried it (permissions read afresh), with the client's name and version recorded on the
 * events it causes.
 */
export function createMcpServer(deps: RouteDeps, sessions: McpSessions, log: FastifyBaseLogger): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, resources: {}, prompts: {} },
    instructions: INSTRUCTIONS,
  });
  const link = (path: string) => new URL(path.replace(/^\//, ''), `${deps.config.baseUrl.replace(/\/?$/, '/')}`).toString();

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: MCP_TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.input as unknown as { type: 'object' },
      annotations: {
        title: tool.title,
        readOnlyHint: tool.effect === 'read',
        destructiveHint: tool.effect === 'destructive',
        idempotentHint: tool.effect === 'read',
        openWorldHint: false,
      },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const caller = callerOf(extra.authInfo);
    const tool = MCP_TOOLS.find((candidate) => candidate.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}"; tools/list names them`);
    if (!sessions.takeToolCall(caller.owner)) {
      return toolError(
        `Too many tool calls: at most ${sessions.limits.toolCallsPerMinute} a minute per token. Wait a minute and try again.`,
      );
    }
    const input = request.params.arguments ?? {};
    const validate = validatorOf(tool);
    if (!validate(input)) {
      const [problem] = validate.errors ?? [];
      const where = problem?.instancePath ? `${problem.instancePath.slice(1).replaceAll('/', '.')} ` : '';
      return toolError(`Invalid arguments: ${where}${problem?.message ?? 'do not match the schema'}`, {
        path: problem?.instancePath ?? '',
      });
    }
    // What the client says it is, and for an agent token the client the person granted it to: events show both.
    const declared = agentName(server.getClientVersion());
    const via = caller.actor.kind === 'user' && caller.actor.grantedTo ? `${declared}, granted to ${caller.actor.grantedTo}` : declared;
    const actor: Actor = caller.actor.kind === 'user' || caller.actor.kind === 'admin-token' ? { ...caller.actor, via } : caller.actor;
    try {
      const project = await authorizeToolCall(tool, input, deps.db, actor);
      return toolResult(await tool.run(input, { deps, actor, project, act: toolUnitOfWork(deps, actor), link }));
    } catch (thrown) {
      const error = thrown instanceof ApiError ? thrown : translateDatabaseError(thrown);
      if (error) {
        const { permissions } = error.extraBody() as { permissions?: string[] };
        return toolError(`${error.name}: ${error.message}`, { name: error.name, ...(permissions?.length ? { permissions } : {}) });
      }
      log.error({ err: thrown, tool: tool.name }, 'An MCP tool call failed');
      return toolError('The tool failed inside Vexil; the server log has the details.');
    }
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'vexil://flags/{project}/{name}',
        name: 'flag',
        title: 'A feature flag',
        description: 'A flag with its state and strategies in every environment',
        mimeType: 'application/json',
      },
      {
        uriTemplate: 'vexil://projects/{project}',
        name: 'project',
        title: 'A project',
        description: 'A project with its environments and the environments that require change requests',
        mimeType: 'application/json',
      },
    ],
  }));

  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => {
    const { actor } = callerOf(extra.authInfo);
    const { features } = await searchFeatures(deps.db, { limit: '100', sortBy: 'createdAt', sortOrder: 'desc' }, actor, deps.clock.now());
    const hidden = await projectsHiddenFrom(deps.db, actor);
    const projects = (await listProjects(deps.db)).filter((project) => !hidden.has(project.id));
    return {
      resources: [
        ...projects.map((project) => ({
          uri: `vexil://projects/${project.id}`,
          name: project.id,
          title: `Project ${project.name}`,
          mimeType: 'application/json',
        })),
        ...features.map((flag) => ({
          uri: `vexil://flags/${flag.project}/${flag.name}`,
          name: flag.name,
          title: `${flag.name} (${flag.project})`,
          ...(flag.description ? { description: flag.description } : {}),
          mimeType: 'application/json',
        })),
      ],
    };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { actor } = callerOf(extra.authInfo);
    const flag = FLAG_URI.exec(request.params.uri);
    const project = PROJECT_URI.exec(request.params.uri);
    if (!flag && !project) {
      throw new McpError(ErrorCode.InvalidParams, 'Resources are vexil://flags/{project}/{name} and vexil://projects/{project}');
    }
    const projectId = decodeURIComponent((flag ?? project)![1]!);
    try {
      await authorize(deps.db, actor, { permission: 'READ', project: projectId });
      const read = flag
        ? await getFeature(deps.db, projectId, decodeURIComponent(flag[2]!), actor)
        : { ...(await getProject(deps.db, projectId)), changeRequestEnvironments: await protectedEnvironmentNames(deps.db, projectId) };
      return { contents: [{ uri: request.params.uri, mimeType: 'application/json', text: JSON.stringify(read) }] };
    } catch (error) {
      if (error instanceof ApiError) throw new McpError(ErrorCode.InvalidParams, error.message);
      throw error;
    }
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [
      {
        name: 'flag_a_change',
        title: 'Put a change behind a flag',
        description: 'The evaluate → detect → create → wrap workflow for the change you are making',
        arguments: [{ name: 'change', description: 'What the change does', required: true }],
      },
    ],
  }));

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const { actor } = callerOf(extra.authInfo);
    if (request.params.name !== 'flag_a_change') throw new McpError(ErrorCode.InvalidParams, `Unknown prompt "${request.params.name}"`);
    const change = String(request.params.arguments?.change ?? '').slice(0, 2000);
    const hidden = await projectsHiddenFrom(deps.db, actor);
    return {
      description: 'Put a change behind a Vexil feature flag',
      messages: [
        {
          role: 'user' as const,
          content: {
            type: 'text' as const,
            text:
              `I am making this change: ${change}\n\n` +
              '1. Call evaluate_change with the description, the files and the code around it. If no flag is needed, stop.\n' +
              '2. Call detect_flag: if a flag already covers this change, use it instead of creating one.\n' +
              `3. Otherwise call create_flag with the recommended type and a clear description${hidden.size ? ' (in a project list_projects shows)' : ''}.\n` +
              '4. Call wrap_change for the file you are editing and put the new code on the flag-on path, keeping the old path.\n' +
              '5. Turn it on in development with toggle_flag_environment, and roll it out with set_flag_rollout.\n' +
              'Tell me the flag name and the link Vexil returns.',
          },
        },
      ],
    };
  });

  return server;
}
