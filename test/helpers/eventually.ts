/** Polls `check` until it holds or `timeoutMs` passes; returns how long it took. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now() - started;
}
