import { parentPort, workerData } from 'node:worker_threads';
import { readFindings } from './file-findings.js';
import { languageNamed } from './languages.js';

/** A scanning thread: reads its share of the files (`scanRepository` hands them out) and posts their findings back. */
const { files, wrappers } = workerData as { files: Array<{ path: string; file: string; language: string }>; wrappers: string[] };
const found = [];
for (const source of files) found.push(await readFindings(source.path, source.file, languageNamed(source.language), new Set(wrappers)));
parentPort!.postMessage(found);
