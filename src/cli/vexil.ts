#!/usr/bin/env -S node --disable-proto=throw
import { hardenPrototypes } from '../shared/prototype-hardening.js';
import { runMcpBridge } from './mcp.js';
import { runRefsCommand } from './refs/refs-command.js';

// It relays what a server sends: no key of that reaches a prototype, as in the server itself.
hardenPrototypes();

// The `vexil` command a package install puts on the PATH (`npx vexil mcp`). The server is `npm start`; operator
// commands are `npm run admin`.
const [command, ...args] = process.argv.slice(2);
if (command === 'mcp') {
  await runMcpBridge();
} else if (command === 'refs') {
  const outcome = await runRefsCommand(args, process.cwd(), process.env);
  process.stdout.write(outcome.stdout);
  process.stderr.write(outcome.stderr);
  process.exitCode = outcome.exitCode;
} else {
  process.stderr.write(
    "Usage: vexil mcp         Vexil's MCP server over stdio (needs VEXIL_URL and VEXIL_TOKEN)\n       vexil refs scan   where each flag is read in a repository's code (vexil refs --help)\n",
  );
  process.exit(command === undefined || command === '--help' ? 0 : 2);
}
