import type { Unlisten } from '../../db/database.js';
import type { ConfigurationChanges } from './configuration-changes.js';

/**
 * What every committed change tells this process (from any instance: notification-channels.ts), fanned out to what
 * keeps something a change may outdate: the SDK store, the token cache, the settings. Built once, in the composition
 * root, and started before the app serves; each subscriber is called in turn, one failing never keeping the change
 * from the others.
 */
export class ChangeFeed {
  private readonly subscribers: Array<(payload: string | undefined) => void> = [];
  private unlisten: Unlisten | undefined;

  constructor(
    private readonly changes: ConfigurationChanges,
    private readonly onSubscriberError: (error: unknown) => void,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.changes((payload) => this.publish(payload));
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
  }

  /** Called with each change's payload: the kinds it touched (`CHANGED_*`) and flags, or undefined for anything. */
  subscribe(subscriber: (payload: string | undefined) => void): void {
    this.subscribers.push(subscriber);
  }

  /** Called when a committed change touched `kind` (`CHANGED_*`), or may have: after listening (re)started. */
  onChangeOf(kind: string, hook: () => void): void {
    this.subscribe((payload) => {
      if (payload === undefined || payload.split(',').includes(kind)) hook();
    });
  }

  private publish(payload: string | undefined): void {
    for (const subscriber of this.subscribers) {
      try {
        subscriber(payload);
      } catch (error) {
        this.onSubscriberError(error);
      }
    }
  }
}
