import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EvaluationContext } from '../../src/domain/evaluation/context.js';
import { engineFor } from '../../src/domain/evaluation/engine.js';
import { configurationOf, specifications } from '../helpers/client-specification.js';

/** What an SDK answers for a flag it does not have: off, and the `disabled` variant. */
const MISSING = { enabled: false, variant: { name: 'disabled', enabled: false } };

describe('the engine against the official client specification', () => {
  for (const specification of specifications()) {
    test(specification.name, () => {
      const engine = engineFor(configurationOf(specification));
      const answerOf = (name: string, context: Record<string, unknown>) => {
        const flag = engine.flag(name);
        return flag ? engine.evaluate(flag, context as EvaluationContext) : MISSING;
      };
      for (const { description, context, toggleName, expectedResult } of specification.tests ?? []) {
        assert.equal(answerOf(toggleName, context).enabled, expectedResult, description);
      }
      for (const { description, context, toggleName, expectedResult } of specification.variantTests ?? []) {
        const answer = answerOf(toggleName, context);
        const { feature_enabled: featureEnabled, ...variant } = expectedResult;
        assert.deepEqual(answer.variant, variant, description);
        if (featureEnabled !== undefined) assert.equal(answer.enabled, featureEnabled, description);
      }
      assert.ok((specification.tests?.length ?? 0) + (specification.variantTests?.length ?? 0) > 0, 'the file holds tests');
    });
  }
});
