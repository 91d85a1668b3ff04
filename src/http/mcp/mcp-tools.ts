import { CHANGE_REQUEST_TOOLS } from './tools/change-requests.tools.js';
import { CODE_GUIDANCE_TOOLS } from './tools/code-guidance.tools.js';
import { EVENT_TOOLS } from './tools/events.tools.js';
import { EXPERIMENT_TOOLS } from './tools/experiments.tools.js';
import { FLAG_CHANGE_TOOLS } from './tools/flag-changes.tools.js';
import { FLAG_READ_TOOLS } from './tools/flag-reads.tools.js';
import type { McpTool } from './tools/tool.js';

/**
 * Every tool the MCP server offers, in the order it lists them: Unleash MCP's and Vexil's own, each room by what its
 * tools do, each tool declaring its access as a route does.
 */
export const MCP_TOOLS: McpTool[] = [
  ...FLAG_READ_TOOLS,
  ...FLAG_CHANGE_TOOLS,
  ...CODE_GUIDANCE_TOOLS,
  ...EVENT_TOOLS,
  ...CHANGE_REQUEST_TOOLS,
  ...EXPERIMENT_TOOLS,
];
