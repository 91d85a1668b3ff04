/**
 * Compares Vexil's evaluation engine with the official Node SDK on as many random evaluations as asked:
 *   npm run engine:differential -- --comparisons 10000000 [--seed 42]
 * Prints progress per million and every difference found (with the seed that replays it); exits 1 on any.
 */
import { parseArgs } from 'node:util';
import { compareWithSdk } from '../test/helpers/engine-differential.js';

const { values } = parseArgs({
  options: { comparisons: { type: 'string', default: '10000000' }, seed: { type: 'string' } },
});
const wanted = Number(values.comparisons);
const firstSeed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const CHUNK = 1_000_000;
let compared = 0;
let differences = 0;
const started = performance.now();
for (let seed = firstSeed; compared < wanted; seed++) {
  const result = compareWithSdk(seed, Math.min(CHUNK, wanted - compared));
  compared += result.compared;
  differences += result.differences.length;
  for (const difference of result.differences) console.log(JSON.stringify(difference));
  console.log(
    `${compared.toLocaleString('en')} compared (seeds ${firstSeed}–${seed}), ${differences} differences, ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}
process.exitCode = differences > 0 ? 1 : 0;
