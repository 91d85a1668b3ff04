import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  configurationReference,
  EDGE_SETTINGS,
  SERVER_SETTINGS,
  type Setting,
  TELEMETRY_SETTINGS,
} from '../../scripts/config-reference.js';
import { EDGE_SETTINGS_NOT_SUPPORTED, loadConfig, loadEdgeConfig, loadTelemetryConfig } from '../../src/config.js';

type Env = Record<string, string | undefined>;

/** The variables a loader reads from the given environment: every name it looks up, set or not. */
function variablesRead(load: (env: Env) => unknown, given: Env): Set<string> {
  const read = new Set<string>();
  const env = new Proxy(given, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  });
  load(env);
  return read;
}

/**
 * What a loader reads from a working environment and from each one with a single variable left out, where another may
 * be read in its place (HOST without INTERFACE). Those may be refused (a required one missing): what was read counts.
 */
function variablesReadAround(load: (env: Env) => unknown, working: Env): Set<string> {
  const read = variablesRead(load, working);
  for (const leftOut of Object.keys(working)) {
    const { [leftOut]: _, ...rest } = working;
    try {
      for (const name of variablesRead(load, rest)) read.add(name);
    } catch {
      // Refused without it; the lookups before the refusal were recorded all the same.
    }
  }
  return read;
}

const examples = (settings: Setting[], leaveOut: string[] = []) =>
  Object.fromEntries(settings.filter((setting) => !leaveOut.includes(setting.name)).map((setting) => [setting.name, setting.example]));
const names = (settings: Setting[]) => [...new Set(settings.map((setting) => setting.name))].sort();

test('docs/configuration.md is what scripts/config-reference.ts writes (npm run docs:config)', () => {
  assert.equal(readFileSync(join(import.meta.dirname, '../../docs/configuration.md'), 'utf8'), configurationReference());
});

test("the server's reference names exactly the variables the server reads, and each example is a value it takes", () => {
  // Every example at once is one working configuration (it must not be refused), and reads what depends on others
  // (OIDC_* once OIDC_ISSUER is set); on the embedded database instead of PostgreSQL, DATA_DIR is read.
  const read = new Set([
    ...variablesReadAround(loadConfig, examples(SERVER_SETTINGS)),
    ...variablesReadAround(loadConfig, examples(SERVER_SETTINGS, ['DATABASE_URL', 'DATABASE_LISTEN_URL'])),
    ...variablesReadAround(loadTelemetryConfig, examples(TELEMETRY_SETTINGS)),
  ]);
  assert.deepEqual([...read].sort(), names([...SERVER_SETTINGS, ...TELEMETRY_SETTINGS]));
});

test("the edge's reference names exactly the variables the edge reads (its refused ones apart), and each example works", () => {
  const offline = ['BOOTSTRAP_FILE', 'CLIENT_TOKENS', 'FRONTEND_TOKENS', 'RELOAD_INTERVAL'];
  // Following an upstream and offline mode exclude each other: each is a working configuration of its own.
  const read = new Set([
    ...variablesReadAround(loadEdgeConfig, examples(EDGE_SETTINGS, offline)),
    ...variablesReadAround(loadEdgeConfig, examples(EDGE_SETTINGS, ['UPSTREAM_URL', 'TOKENS'])),
    ...variablesReadAround(loadTelemetryConfig, examples(TELEMETRY_SETTINGS)),
  ]);
  for (const refused of Object.keys(EDGE_SETTINGS_NOT_SUPPORTED)) read.delete(refused);
  assert.deepEqual([...read].sort(), names([...EDGE_SETTINGS, ...TELEMETRY_SETTINGS]));
});
