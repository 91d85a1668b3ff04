import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { EDGE_SETTINGS_NOT_SUPPORTED, loadEdgeConfig } from '../../src/config.js';
import { edgeCommand } from '../../src/edge/command-line.js';
import { EDGE_SETTINGS, TELEMETRY_SETTINGS } from '../../scripts/config-reference.js';

/*
 * Drop-in, proven from Unleash Edge's own definition: every setting Unleash Edge 20.x declares (read from its source,
 * names only, in test/fixtures/unleash-edge-20.x.json) is either taken by Vexil Edge or refused at start with a
 * message that names the Vexil way, and docs/edge.md's table says which, for each one. A setting Unleash Edge adds
 * later fails here until it is decided.
 */
const unleashEdge = JSON.parse(readFileSync(new URL('../fixtures/unleash-edge-20.x.json', import.meta.url), 'utf8')) as {
  variables: string[];
  subcommands: string[];
};
const UPSTREAM = { UPSTREAM_URL: 'http://127.0.0.1:4242', TOKENS: '*:development.0123456789abcdef0123456789abcdef' };
const taken = new Map([...EDGE_SETTINGS, ...TELEMETRY_SETTINGS].map((setting) => [setting.name, setting.example]));
/** Read by the health and ready commands, not by a serving edge. */
const COMMAND_ONLY = new Set(['EDGE_URL']);
/** Read in offline mode, where UPSTREAM_URL is not given. */
const OFFLINE = new Set(['BOOTSTRAP_FILE', 'CLIENT_TOKENS', 'FRONTEND_TOKENS', 'RELOAD_INTERVAL']);

describe("Unleash Edge 20.x's settings", () => {
  it('each is taken or refused: none is left undecided', () => {
    const undecided = unleashEdge.variables.filter(
      (name) => !taken.has(name) && !(name in EDGE_SETTINGS_NOT_SUPPORTED) && !COMMAND_ONLY.has(name),
    );
    assert.deepEqual(undecided, []);
  });

  it('a refused one stops the start with one line naming it and the Vexil way', () => {
    for (const name of unleashEdge.variables.filter((variable) => variable in EDGE_SETTINGS_NOT_SUPPORTED)) {
      assert.throws(
        () => loadEdgeConfig({ ...UPSTREAM, [name]: 'x' }),
        (error: Error) =>
          error.message === `${name} is not supported by Vexil Edge: ${EDGE_SETTINGS_NOT_SUPPORTED[name]} (see docs/edge.md)`,
        name,
      );
    }
  });

  it('a taken one is read with the value Unleash Edge takes', () => {
    for (const name of unleashEdge.variables.filter((variable) => taken.has(variable) && !OFFLINE.has(variable))) {
      assert.doesNotThrow(() => loadEdgeConfig({ ...UPSTREAM, [name]: taken.get(name)! }), name);
    }
  });

  it("docs/edge.md's table names every one of them, taken or refused", () => {
    const docs = readFileSync(new URL('../../docs/edge.md', import.meta.url), 'utf8');
    const table = docs.slice(docs.indexOf('## From Unleash Edge'));
    assert.deepEqual(
      unleashEdge.variables.filter((name) => !table.includes(`\`${name}\``)),
      [],
    );
  });

  it('its command line: subcommands and long options become the same settings; anything else is refused with what to write', () => {
    assert.deepEqual(unleashEdge.subcommands, ['edge', 'offline', 'health', 'ready']);
    assert.deepEqual(edgeCommand(['edge', '--upstream-url', 'http://up:4242', '--tokens=a,b', '--trust-proxy', '--port', '3000'], {}), {
      kind: 'serve',
      variables: { UPSTREAM_URL: 'http://up:4242', TOKENS: 'a,b', TRUST_PROXY: 'true', PORT: '3000' },
    });
    assert.deepEqual(edgeCommand([], {}), { kind: 'serve', variables: {} });
    assert.deepEqual(edgeCommand(['health', '--edge-url', 'http://edge:3063'], {}), {
      kind: 'check',
      probe: 'health',
      variables: { EDGE_URL: 'http://edge:3063' },
    });
    assert.equal(edgeCommand(['ready'], {}).kind, 'check');
    assert.deepEqual(edgeCommand(['offline', '--bootstrap-file', 'f.json'], {}), {
      kind: 'serve',
      variables: { BOOTSTRAP_FILE: 'f.json' },
    });
    for (const [argv, message] of [
      [['offline'], /offline needs a bootstrap file/],
      [['edge', '-u', 'http://up'], /long form \(--upstream-url https:\/\/…\) or as its variable/],
      [['serve'], /Unknown command "serve"/],
    ] as const) {
      const refused = edgeCommand([...argv], {});
      assert.equal(refused.kind, 'refused');
      assert.match((refused as { message: string }).message, message);
    }
  });
});
