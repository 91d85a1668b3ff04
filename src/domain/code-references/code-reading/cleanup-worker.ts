import { parentPort, workerData } from 'node:worker_threads';
import { cleanUpFlag, type SourceText } from './flag-cleanup.js';

/** A cleanup's thread: `cleanUpFlagOffThread` hands it the files and the flag, and it posts the cleanup back. */
const { sources, flag, keep, wrappers } = workerData as { sources: SourceText[]; flag: string; keep: boolean; wrappers: string[] };
parentPort!.postMessage(await cleanUpFlag(sources, flag, keep, { wrappers }));
