import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeEvent, type DescribedEvent } from '../../src/domain/events/event-descriptions.js';
import { EVENT_TYPES } from '../../src/domain/events/event-types.js';

/** Every event type Vexil records today: each must have its own label and sentence, not the generic one. */
const WRITTEN_TYPES = [
  'application-updated',
  'edge-client-created',
  'edge-client-deleted',
  'public-signup-token-created',
  'public-signup-token-updated',
  'public-signup-token-user-added',
  'signal-endpoint-created',
  'signal-endpoint-updated',
  'signal-endpoint-deleted',
  'signal-endpoint-token-created',
  'signal-endpoint-token-deleted',
  'actions-created',
  'actions-updated',
  'actions-deleted',
  'release-plan-template-created',
  'release-plan-template-updated',
  'release-plan-template-archived',
  'release-plan-added',
  'release-plan-removed',
  'release-plan-milestone-started',
  'release-plan-progressions-paused',
  'release-plan-progressions-resumed',
  'safeguard-changed',
  'safeguard-deleted',
  'safeguard-triggered',
  'group-created',
  'group-updated',
  'group-deleted',
  'group-user-added',
  'group-user-removed',
  'service-account-created',
  'service-account-updated',
  'service-account-deleted',
  'project-access-added',
  'project-access-user-roles-updated',
  'project-access-group-roles-updated',
  'project-access-user-roles-deleted',
  'project-access-group-roles-deleted',
  'application-created',
  'addon-config-created',
  'addon-config-updated',
  'addon-config-deleted',
  'api-token-created',
  'api-token-deleted',
  'context-field-created',
  'context-field-deleted',
  'context-field-updated',
  'environment-created',
  'environment-deleted',
  'environment-updated',
  'feature-archived',
  'feature-completed',
  'feature-created',
  'feature-deleted',
  'feature-dependencies-removed',
  'feature-dependency-added',
  'feature-dependency-removed',
  'feature-environment-disabled',
  'feature-environment-enabled',
  'feature-environment-variants-updated',
  'feature-favorited',
  'feature-metadata-updated',
  'feature-project-change',
  'feature-revived',
  'feature-stale-off',
  'feature-stale-on',
  'feature-strategy-add',
  'feature-strategy-remove',
  'feature-strategy-update',
  'feature-tagged',
  'feature-type-updated',
  'feature-uncompleted',
  'feature-unfavorited',
  'feature-untagged',
  'pat-created',
  'pat-deleted',
  'project-created',
  'project-deleted',
  'project-environment-added',
  'project-environment-removed',
  'project-favorited',
  'project-unfavorited',
  'project-updated',
  'segment-created',
  'segment-deleted',
  'segment-updated',
  'strategy-order-changed',
  'strategy-created',
  'strategy-updated',
  'strategy-deleted',
  'strategy-deprecated',
  'strategy-reactivated',
  'setting-updated',
  'tag-type-created',
  'tag-type-deleted',
  'tag-type-updated',
  'user-created',
  'user-deleted',
  'user-password-changed',
  'user-updated',
  'change-request-created',
  'change-added',
  'change-edited',
  'change-discarded',
  'change-request-discarded',
  'change-request-sent-to-review',
  'change-request-approval-added',
  'change-request-approved',
  'change-request-rejected',
  'change-request-cancelled',
  'change-request-applied',
  'change-request-scheduled',
  'change-request-scheduled-application-success',
  'change-request-scheduled-application-failure',
  'change-request-configuration-updated',
  'change-request-title-updated',
  'change-request-comment-added',
  'review-bypassed',
];

const base: DescribedEvent = {
  type: '',
  createdBy: 'alice',
  project: 'shop',
  environment: 'production',
  featureName: 'checkout',
  data: { name: 'x', type: 'release' },
  preData: { name: 'x', type: 'release' },
};

describe('event labels and summaries', () => {
  test('name each event type once', () => {
    assert.deepEqual(
      EVENT_TYPES.filter((type, index) => EVENT_TYPES.indexOf(type) !== index),
      [],
    );
  });

  for (const type of WRITTEN_TYPES) {
    test(`${type} has its own label and sentence`, () => {
      const { label, summary } = describeEvent({ ...base, type });
      const generic = describeEvent({ ...base, type: 'no-such-type' });
      assert.ok(label.length > 0 && label !== type);
      assert.ok(summary.startsWith('**alice** '), summary);
      assert.doesNotMatch(summary, /triggered/, 'not the generic sentence');
      assert.notEqual(summary, generic.summary);
    });
  }

  test('carry the essential values', () => {
    const strategy = (rollout: string) => ({ name: 'flexibleRollout', parameters: { rollout }, constraints: [{}], segments: [] });
    assert.equal(
      describeEvent({ ...base, type: 'feature-strategy-update', preData: strategy('25'), data: strategy('50') }).summary,
      '**alice** updated strategy **flexibleRollout** of **checkout** in **production**: rollout 25% → 50%',
    );
    assert.equal(
      describeEvent({ ...base, type: 'feature-strategy-add', data: strategy('10'), preData: null }).summary,
      '**alice** added strategy **flexibleRollout** (10% rollout, 1 constraint) to **checkout** in **production**',
    );
    assert.equal(
      describeEvent({ ...base, type: 'feature-environment-variants-updated', data: { variants: [{ name: 'red' }, { name: 'blue' }] } })
        .summary,
      '**alice** set the variants of **checkout** in **production** to red, blue',
    );
    assert.equal(
      describeEvent({ ...base, type: 'feature-tagged', data: { type: 'simple', value: 'beta' } }).summary,
      '**alice** tagged **checkout** with **simple:beta**',
    );
  });

  test('name the integration and what changed in it', () => {
    const webhook = { id: 3, provider: 'webhook', enabled: true, events: ['feature-created'] };
    assert.equal(
      describeEvent({ ...base, type: 'addon-config-updated', preData: webhook, data: { ...webhook, enabled: false } }).summary,
      '**alice** updated the **webhook** integration **3** (enabled)',
    );
    assert.equal(
      describeEvent({ ...base, type: 'addon-config-deleted', preData: webhook, data: null }).summary,
      '**alice** deleted the **webhook** integration **3**',
    );
  });

  test('escape markdown in names so they cannot inject formatting', () => {
    const { summary } = describeEvent({ ...base, type: 'feature-archived', createdBy: 'a_*b*', featureName: '[x](y)' });
    assert.equal(summary, '**a\\_\\*b\\*** archived **\\[x\\](y)**');
  });

  test('give other types a generic label and sentence', () => {
    assert.deepEqual(describeEvent({ ...base, type: 'banner-created', featureName: null }), {
      label: 'Banner created',
      summary: '**alice** triggered **banner-created** in project **shop**',
    });
  });
});
