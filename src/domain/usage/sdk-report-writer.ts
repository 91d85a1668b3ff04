import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../db/pg-errors.js';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../../db/unit-of-work.js';
import { ServiceUnavailableError } from '../../shared/errors.js';
import { SYSTEM_ACTOR } from '../access/actor.js';

/** What SDKs send besides reading flags. */
export type SdkReportKind = 'registration' | 'metrics';

/** What became of a report that could not be written when it came. */
export type HeldReportOutcome = 'held' | 'written_late' | 'dropped';

export interface SdkReportWriterOptions {
  /** How much (JSON bytes) may wait in memory while the database is away. */
  maxHeldBytes: number;
  /** How often held reports are tried again. */
  retryMs: number;
  /** Whether the database answers, as this instance last saw it (PostgreSQL): while it does not, reports are held at once. */
  databaseUp?: () => boolean;
  /** Counts each report held, written later or dropped, for the metrics. */
  onOutcome?: (kind: SdkReportKind, outcome: HeldReportOutcome) => void;
}

interface HeldReport {
  kind: SdkReportKind;
  bytes: number;
  work: (uow: UnitOfWork) => Promise<void>;
}

/** Where the writer tells what an operator should know: reports it gave up on. */
export interface SdkReportLog {
  warn(fields: object, message: string): void;
}

/**
 * Writes what SDKs report (registrations, usage), each in a transaction of its own. While PostgreSQL is away a report
 * is held in memory, in the order it came, up to `maxHeldBytes`, and written when it answers again; the SDK is told
 * 202 as when it is written. Past the bound a report is dropped and answered 503 with `Retry-After`, so an SDK that
 * keeps what it could not send sends it again. Usage counts add up and a registration is the latest of its instance,
 * so writing them late changes nothing but when.
 */
export class SdkReportWriter {
  private readonly held: HeldReport[] = [];
  private heldBytes = 0;
  private retry: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private log: SdkReportLog | undefined;

  constructor(
    private readonly deps: UnitOfWorkDeps,
    private readonly options: SdkReportWriterOptions,
  ) {}

  /** Reports held now. */
  heldCount(): number {
    return this.held.length;
  }

  /** Sets where reports given up on are told. */
  logTo(log: SdkReportLog): void {
    this.log = log;
  }

  /**
   * Writes the report now, or holds it when the database does not answer. `size` is asked only then: the report's
   * JSON length, for the bound.
   */
  async write(kind: SdkReportKind, size: () => number, work: (uow: UnitOfWork) => Promise<void>): Promise<'written' | 'held'> {
    // While reports wait, a new one waits behind them: a registration must not be overtaken by an older one.
    if (this.held.length === 0 && this.options.databaseUp?.() !== false) {
      try {
        await inUnitOfWork(this.deps, SYSTEM_ACTOR, work, { inMaintenance: 'SDK reports' });
        return 'written';
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
      }
    }
    const bytes = size();
    if (this.heldBytes + bytes > this.options.maxHeldBytes) {
      this.options.onOutcome?.(kind, 'dropped');
      throw new ServiceUnavailableError(
        'The database does not answer and this instance holds as many SDK reports as it may; send this one again later',
        DATABASE_RETRY_AFTER_SECONDS,
      );
    }
    this.held.push({ kind, bytes, work });
    this.heldBytes += bytes;
    this.options.onOutcome?.(kind, 'held');
    this.retry ??= setInterval(() => this.writeHeld(), this.options.retryMs);
    return 'held';
  }

  /** Writes held reports in order until the database stops answering; one pass at a time. */
  private writeHeld(): Promise<void> {
    this.writing ??= this.writeInOrder().finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  private async writeInOrder(): Promise<void> {
    while (this.held.length > 0) {
      const report = this.held[0]!;
      try {
        await inUnitOfWork(this.deps, SYSTEM_ACTOR, report.work, { inMaintenance: 'SDK reports' });
        this.options.onOutcome?.(report.kind, 'written_late');
      } catch (error) {
        if (isDatabaseUnavailable(error)) return;
        // What was accepted when it came may no longer be (its token deleted meanwhile): it is given up on, not retried for ever.
        this.options.onOutcome?.(report.kind, 'dropped');
        this.log?.warn({ err: error, kind: report.kind }, 'A held SDK report could not be written and was dropped');
      }
      this.held.shift();
      this.heldBytes -= report.bytes;
    }
    clearInterval(this.retry);
    this.retry = undefined;
  }

  /** At shutdown: one last try; what is still held then is lost, and told. */
  async stop(): Promise<void> {
    clearInterval(this.retry);
    this.retry = undefined;
    await this.writing;
    if (this.held.length > 0) await this.writeInOrder();
    if (this.held.length > 0) {
      this.log?.warn({ held: this.held.length }, 'SDK reports held while the database was away are lost: it still does not answer');
    }
  }
}
