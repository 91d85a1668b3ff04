import { Worker } from 'node:worker_threads';

/**
 * What a worker thread posts back, once. It rejects if the thread fails, stops without answering, or is still
 * working at the deadline; the thread is stopped in every case.
 */
export function resultOfWorker<T>(script: URL, workerData: unknown, deadline?: { ms: number; error: () => Error }): Promise<T> {
  const worker = new Worker(script, { workerData });
  let timer: NodeJS.Timeout | undefined;
  return new Promise<T>((resolve, reject) => {
    if (deadline) timer = setTimeout(() => reject(deadline.error()), deadline.ms);
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`a worker thread stopped with exit code ${code} before answering`)));
  }).finally(() => {
    clearTimeout(timer);
    void worker.terminate();
  });
}
