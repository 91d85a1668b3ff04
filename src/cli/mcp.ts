#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * `npx vexil mcp` (or `node dist/cli/mcp.js`): Vexil's MCP server for clients that start a command and speak over
 * its standard input and output. It relays every message to the server's own MCP endpoint (VEXIL_URL, with
 * VEXIL_TOKEN as the bearer), so tools, permissions, change requests and the event log are the server's, and the
 * client's name and version reach the event log unchanged. Nothing but protocol goes to stdout; diagnostics go to
 * stderr.
 */
export async function runMcpBridge(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const url = env.VEXIL_URL?.trim();
  const token = env.VEXIL_TOKEN?.trim();
  if (!url || !token) {
    process.stderr.write(
      'vexil mcp: set VEXIL_URL (the server, such as https://flags.example.com) and VEXIL_TOKEN (a personal access token)\n',
    );
    process.exit(2);
  }
  let endpoint: URL;
  try {
    endpoint = new URL('api/admin/mcp', url.endsWith('/') ? url : `${url}/`);
  } catch {
    process.stderr.write(`vexil mcp: VEXIL_URL is not a URL: ${url}\n`);
    process.exit(2);
  }
  const remote = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const local = new StdioServerTransport();
  const initializeIds = new Set<string | number>();

  local.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && message.method === 'initialize') initializeIds.add(message.id);
    remote.send(message).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      process.stderr.write(`vexil mcp: ${endpoint.origin} did not take a message: ${reason}\n`);
      // A request the server never answered is answered here, so the client does not wait forever.
      if (isJSONRPCRequest(message)) {
        void local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: `Vexil did not answer: ${reason}` } });
      }
    });
  };
  remote.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCResultResponse(message) && initializeIds.delete(message.id)) {
      const version = (message.result as { protocolVersion?: string }).protocolVersion;
      if (version) remote.setProtocolVersion(version);
    }
    void local.send(message);
  };
  remote.onerror = (error) => process.stderr.write(`vexil mcp: ${error.message}\n`);
  const end = () => {
    void remote
      .terminateSession()
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  local.onclose = end;
  await remote.start();
  await local.start();
  process.stdin.on('end', end);
}

// Run when started as a file (`node dist/cli/mcp.js`), not when `vexil mcp` imports it.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await runMcpBridge();
