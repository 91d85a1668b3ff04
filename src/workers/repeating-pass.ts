/**
 * Runs `pass` every `intervalMs` (the first one interval after start) until stopped: a pass never overlaps the
 * next, a failed pass goes to `onError` and the next one runs as planned, and stopping waits for a pass in flight,
 * so the database can be closed after. What the schedulers share.
 */
export class RepeatingPass {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.pass()
        .catch(this.onError)
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs);
        });
    };
    this.timer = setTimeout(tick, this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}

/**
 * A worker whose work is one pass (`runOnce`, which tests call directly) repeated every interval: the schedulers.
 * A failed pass is logged and the next one runs as planned.
 */
export abstract class RepeatingWorker<Pass> {
  private readonly repeating: RepeatingPass;

  constructor(what: string, log: { error(details: object, message: string): void }, intervalMs: number) {
    this.repeating = new RepeatingPass(
      () => this.runOnce(),
      (error) => log.error({ err: error }, `A pass of the ${what} failed; trying again later`),
      intervalMs,
    );
  }

  abstract runOnce(): Promise<Pass>;

  /** Runs a pass every interval until stopped; a pass never overlaps the next. */
  start(): void {
    this.repeating.start();
  }

  /** Stops the timer and waits for a pass in flight, so the database can be closed after. */
  stop(): Promise<void> {
    return this.repeating.stop();
  }
}
