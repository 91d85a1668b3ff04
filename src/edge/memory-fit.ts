import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';

/**
 * What an edge needs to serve the flags it holds under load, in MiB. Measured in a container by `npm run
 * check:image`: 5,000 flags, 1,000 streams and both SDK APIs under load peak at 101 to 111 MiB by the container's
 * memory cgroup (file pages included). The per-flag share is the configuration's size in the heap, served and
 * streamed; the rest is Node's own, so that 5,000 flags come to 108 (docs/edge.md, Memory).
 */
const BASE_MIB = 78;
const PER_FLAG_KIB = 6;

export function neededMiB(flagsHeld: number): number {
  return Math.ceil(BASE_MIB + (flagsHeld * PER_FLAG_KIB) / 1024);
}

export interface MemoryFit {
  /** Why the edge must not start: the flags it holds do not fit its memory limit. */
  refusal?: string;
  /** What to change so that V8 does not grow its heap past the limit under load. */
  warning?: string;
}

/**
 * Whether the flags an edge holds fit the memory it is given. `limitBytes` is the container's (Node's
 * `process.constrainedMemory()`); no limit, or one above the machine's memory, is none. Refusing at start is kinder
 * than serving until the first busy minute gets the process killed.
 */
export function memoryFit(flagsHeld: number, limitBytes: number, heapLimitBytes: number, machineBytes: number): MemoryFit {
  if (!(limitBytes > 0 && limitBytes < machineBytes)) return {};
  const limitMiB = Math.floor(limitBytes / 2 ** 20);
  const needed = neededMiB(flagsHeld);
  if (needed > limitMiB) {
    const suggested = Math.ceil((needed * 1.25) / 32) * 32;
    return {
      refusal:
        `it holds ${flagsHeld.toLocaleString('en')} flags, which take about ${needed} MiB to serve under load, and its memory limit is ` +
        `${limitMiB} MiB: raise the limit to ${suggested} MiB or more (with --max-old-space-size=${suggested / 2}), or give it tokens ` +
        'for fewer projects or environments',
    };
  }
  const heapMiB = Math.round(heapLimitBytes / 2 ** 20);
  if (heapMiB > limitMiB * 0.75) {
    return {
      warning:
        `V8 may grow its heap to ${heapMiB} MiB, past what the memory limit of ${limitMiB} MiB leaves it, and the process be killed ` +
        `under load: start Node with --max-old-space-size=${Math.floor(limitMiB / 2)} (half the limit), as the Kubernetes manifests do`,
    };
  }
  return {};
}

/** The fit of this process: its container's limit, V8's heap limit, the machine's memory. */
export function memoryFitOfThisProcess(flagsHeld: number): MemoryFit {
  return memoryFit(flagsHeld, process.constrainedMemory(), getHeapStatistics().heap_size_limit, totalmem());
}
