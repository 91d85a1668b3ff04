/**
 * Unleash Edge's command line, as Vexil Edge takes it: `unleash-edge edge --upstream-url … --tokens …` becomes the
 * same variables (`UPSTREAM_URL`, `TOKENS`) a deployment file sets, so the arguments of an Unleash Edge container
 * work unchanged; `health` and `ready` check a running edge, as Unleash Edge's image uses them for its HEALTHCHECK.
 * An argument given on the command line wins over the variable, as in Unleash Edge.
 */
export type EdgeCommand =
  | { kind: 'serve'; variables: Record<string, string> }
  | { kind: 'check'; probe: 'health' | 'ready'; variables: Record<string, string> }
  | { kind: 'refused'; message: string };

const SUBCOMMANDS = new Set(['edge', 'offline', 'health', 'ready']);

/** `--upstream-url` → `UPSTREAM_URL`. */
const variableOf = (option: string) => option.replace(/-/g, '_').toUpperCase();

export function edgeCommand(argv: string[], env: Record<string, string | undefined>): EdgeCommand {
  const args = [...argv];
  const subcommand = args[0] !== undefined && !args[0].startsWith('-') ? args.shift()! : 'edge';
  if (!SUBCOMMANDS.has(subcommand)) {
    return { kind: 'refused', message: `Unknown command "${subcommand}": Vexil Edge runs as edge (the default), offline, health or ready` };
  }
  const variables: Record<string, string> = {};
  while (args.length > 0) {
    const arg = args.shift()!;
    if (!arg.startsWith('--')) {
      return {
        kind: 'refused',
        message: `"${arg}" is not an option Vexil Edge takes: give each option in its long form (--upstream-url https://…) or as its variable (UPSTREAM_URL)`,
      };
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (!/^[a-z][a-z0-9-]*$/.test(name)) return { kind: 'refused', message: `"--${name}" is not an option Vexil Edge takes` };
    // A switch (--trust-proxy) stands alone; an option takes the next argument unless that is an option itself.
    const value = inline ?? (args[0] !== undefined && !args[0].startsWith('--') ? args.shift()! : 'true');
    variables[variableOf(name)] = value;
  }
  if (subcommand === 'offline' && !variables.BOOTSTRAP_FILE && !env.BOOTSTRAP_FILE) {
    return { kind: 'refused', message: 'offline needs a bootstrap file: --bootstrap-file (or BOOTSTRAP_FILE)' };
  }
  if (subcommand === 'health' || subcommand === 'ready') return { kind: 'check', probe: subcommand, variables };
  return { kind: 'serve', variables };
}

/** `unleash-edge health` / `ready`: the running edge's probe at EDGE_URL (http://localhost:3063 unless given). */
export async function checkRunningEdge(probe: 'health' | 'ready', edgeUrl = 'http://localhost:3063'): Promise<boolean> {
  try {
    const answer = await fetch(`${edgeUrl.replace(/\/$/, '')}/internal-backstage/${probe}`, { signal: AbortSignal.timeout(5000) });
    return answer.ok;
  } catch {
    return false;
  }
}
