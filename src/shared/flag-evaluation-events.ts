/**
 * Flag evaluations as OpenTelemetry's semantic conventions for feature flags describe them: a
 * `feature_flag.evaluation` event per evaluation, in the trace of the request that asked. Only a share of them is
 * recorded (FLAG_EVALUATION_EVENTS_RATIO), so a busy frontend API does not flood a collector; none while telemetry is
 * off, at the cost of one comparison per evaluation.
 */
import { logs } from '@opentelemetry/api';

let ratio = 0;

/** Set once telemetry has started; 0 (the default) records nothing. */
export function sampleFlagEvaluations(share: number): void {
  ratio = share;
}

/** Whether any evaluation is recorded: a loop over thousands of flags can be skipped whole when none is. */
export function flagEvaluationEventsOn(): boolean {
  return ratio > 0;
}

/** Whether this evaluation is one to record. */
export function flagEvaluationSampled(): boolean {
  return ratio > 0 && (ratio >= 1 || Math.random() < ratio);
}

export interface FlagEvaluation {
  key: string;
  /** The flag's project: its set, in the conventions' words. */
  project: string;
  variant: string;
  value: unknown;
  /** OpenFeature's reason (STATIC, TARGETING_MATCH, SPLIT, DEFAULT, DISABLED…). */
  reason: string;
}

export function recordFlagEvaluation(evaluation: FlagEvaluation): void {
  const { value } = evaluation;
  logs.getLogger('vexil').emit({
    eventName: 'feature_flag.evaluation',
    attributes: {
      'feature_flag.key': evaluation.key,
      'feature_flag.provider.name': 'Vexil',
      'feature_flag.set.id': evaluation.project,
      'feature_flag.result.variant': evaluation.variant,
      'feature_flag.result.value':
        typeof value === 'object' && value !== null ? JSON.stringify(value) : (value as string | number | boolean),
      'feature_flag.result.reason': evaluation.reason.toLowerCase(),
    },
  });
}
