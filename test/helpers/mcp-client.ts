import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expectStatus } from './assertions.js';
import { createUserSession } from './fixtures.js';
import { after } from 'node:test';
import { type TestApp, useTestApp } from './test-app.js';

/** Vexil's MCP server as the official MCP SDK's client reaches it over Streamable HTTP, with a person's token. */

/** The app a test file shares, listening on a free port for MCP clients, which are closed after the file's tests. */
export function useMcpTestApp(): { ctx: TestApp; baseUrl(): string; clients: Client[] } {
  let baseUrl = '';
  const ctx = useTestApp({}, async (app) => {
    baseUrl = await app.app.listen({ port: 0, host: '127.0.0.1' });
  });
  const clients: Client[] = [];
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });
  return { ctx, clients, baseUrl: () => baseUrl };
}

export async function personalToken(ctx: TestApp, rootRole: 'Admin' | 'Editor' | 'Viewer'): Promise<{ id: number; token: string }> {
  const person = await createUserSession(ctx, rootRole);
  const expiresAt = new Date(ctx.clock.now().getTime() + 86_400_000).toISOString();
  const made = await ctx.withCookie(person.cookie).post('/api/admin/user/tokens', { description: 'agent', expiresAt });
  expectStatus(made, 201);
  return { id: person.id, token: (made.json() as { secret: string }).secret };
}

/** A connected client; the caller closes it (the clients list collects them for an `after`). */
export async function connectMcp(
  baseUrl: string,
  token: string,
  clients: Client[],
  clientInfo = { name: 'Claude Code', version: '1.2.3' },
) {
  const client = new Client(clientInfo);
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/admin/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult & { structuredContent: Record<string, unknown> }> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: Record<string, unknown> };
}

export const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
