import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareWithSdk } from '../helpers/engine-differential.js';

// A new seed each run widens what CI covers over time; a failure prints it, and
// `npm run engine:differential -- --seed <seed>` replays it.
const seed = Number(process.env.ENGINE_DIFFERENTIAL_SEED ?? Math.floor(Math.random() * 2 ** 31));

test(`the engine answers as unleash-client for 100,000 random flag evaluations (seed ${seed})`, () => {
  const { compared, differences } = compareWithSdk(seed, 100_000);
  assert.ok(compared >= 100_000, `${compared} comparisons`);
  assert.deepEqual(differences, [], `seed ${seed}: ${JSON.stringify(differences, null, 1).slice(0, 4000)}`);
});
