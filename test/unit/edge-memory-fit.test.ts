import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoryFit, neededMiB } from '../../src/edge/memory-fit.js';

/*
 * Whether the flags an edge holds fit the memory it is given. The container check (`npm run check:image`) runs the
 * real case: 5,000 flags served under load in 128 MiB, and refused in 96.
 */
const MiB = 2 ** 20;
const MACHINE = 24 * 1024 * MiB;

describe("an edge's memory limit", () => {
  it('holds 5,000 flags in 128 MiB with the heap the manifests give it, and says nothing', () => {
    assert.equal(neededMiB(5000), 108);
    assert.deepEqual(memoryFit(5000, 128 * MiB, 70 * MiB, MACHINE), {});
  });

  it('refuses flags that do not fit, naming the limit to set and the heap to give', () => {
    assert.deepEqual(memoryFit(5000, 96 * MiB, 70 * MiB, MACHINE), {
      refusal:
        'it holds 5,000 flags, which take about 108 MiB to serve under load, and its memory limit is 96 MiB: raise the limit to 160 MiB or more (with --max-old-space-size=80), or give it tokens for fewer projects or environments',
    });
    assert.match(
      memoryFit(20_000, 128 * MiB, 70 * MiB, MACHINE).refusal ?? '',
      /holds 20,000 flags, which take about 196 MiB .* raise the limit to 256 MiB or more \(with --max-old-space-size=128\)/,
    );
  });

  it("warns when V8's own heap limit would outgrow the container (Node sizes it from the machine)", () => {
    assert.deepEqual(memoryFit(350, 128 * MiB, 262 * MiB, MACHINE), {
      warning:
        'V8 may grow its heap to 262 MiB, past what the memory limit of 128 MiB leaves it, and the process be killed under load: start Node with --max-old-space-size=64 (half the limit), as the Kubernetes manifests do',
    });
  });

  it('takes no limit, or one above the machine (cgroup v1 reports 2⁶⁴ bytes), as none', () => {
    assert.deepEqual(memoryFit(100_000, 0, 4192 * MiB, MACHINE), {});
    assert.deepEqual(memoryFit(100_000, 2 ** 64, 4192 * MiB, MACHINE), {});
  });
});
