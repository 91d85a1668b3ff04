const HOUR_MS = 3_600_000;
/** Keys remembered at most: past it all are forgotten at once, which errs on letting through rather than on memory. */
const KEYS_TRACKED = 10_000;

/** Counts what each key (an address, a client) did over the last hour, up to `perHour`, in this process. */
export class HourlyCount {
  private readonly seen = new Map<string, number[]>();

  constructor(private readonly perHour: number) {}

  /** Whether the key may do it once more now. */
  allows(key: string, now: number): boolean {
    return (this.seen.get(key) ?? []).filter((at) => at > now - HOUR_MS).length < this.perHour;
  }

  count(key: string, now: number): void {
    const recent = (this.seen.get(key) ?? []).filter((at) => at > now - HOUR_MS);
    if (!this.seen.has(key) && this.seen.size >= KEYS_TRACKED) this.seen.clear();
    this.seen.set(key, [...recent, now]);
  }

  /** Whether the key may do it once more now, counting it when it may. */
  take(key: string, now: number): boolean {
    if (!this.allows(key, now)) return false;
    this.count(key, now);
    return true;
  }
}
