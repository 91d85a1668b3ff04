import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { textOf, waitForTexts } from '../helpers/browser.js';
import { useUiServer } from '../helpers/ui-server.js';

// Cloning a flag from its page, in a real browser: the name asked for, the API's refusal shown at the field, and
// the copy's own page once made.

describe('cloning a flag on its page', { timeout: 180_000 }, () => {
  const ui = useUiServer('clone', {
    seed: async (api) => {
      await api('POST', '/api/admin/projects', { id: 'checkout', name: 'Checkout' });
      await api('POST', '/api/admin/projects/checkout/features', {
        name: 'one-page-checkout',
        type: 'experiment',
        description: 'The new checkout',
      });
      await api('POST', '/api/admin/projects/checkout/features/one-page-checkout/environments/production/strategies', {
        name: 'flexibleRollout',
        parameters: { rollout: '25', stickiness: 'default', groupId: 'one-page-checkout' },
      });
      await api('POST', '/api/admin/projects/checkout/features/one-page-checkout/environments/production/on');
      await api('POST', '/api/admin/projects/checkout/features', { name: 'saved-cards' });
    },
  });

  test('a taken name is refused at the field; a free one opens the copy, off, with the strategy', async () => {
    const { page } = ui;
    await page.goto(`${ui.server.baseUrl}/projects/checkout/flags/one-page-checkout`);
    await page.getByRole('button', { name: 'Clone' }).click();
    const form = page.getByRole('form', { name: 'Clone one-page-checkout' });
    assert.equal(await form.getByLabel('Name of the copy').inputValue(), 'one-page-checkout-copy');

    await form.getByLabel('Name of the copy').fill('saved-cards');
    await form.getByRole('button', { name: 'Clone' }).click();
    assert.equal(await textOf(form.locator('.field-error')), '"saved-cards" is taken: choose another name');
    assert.match(await textOf(form.getByRole('alert')), /A flag named "saved-cards" already exists/);

    await form.getByLabel('Name of the copy').fill('checkout-v2');
    await page.screenshot({ path: join(ui.workDir, 'clone-form.png') });
    await form.getByRole('button', { name: 'Clone' }).click();
    await page.waitForURL(/\/projects\/checkout\/flags\/checkout-v2$/);
    const heading = page.getByRole('heading', { level: 1 });
    await waitForTexts(heading, (texts) => /checkout-v2\s+experiment/.test(texts[0] ?? ''));
    assert.equal(await page.getByRole('form', { name: /^Clone / }).count(), 0);
    const production = page.getByTestId('environment-production');
    assert.match(await textOf(production.getByTestId('strategy')), /25% of default/);
    assert.equal(await production.getByRole('switch').isChecked(), false);
    assert.match(await textOf(page.getByText('The new checkout')), /The new checkout/);
    await page.screenshot({ path: join(ui.workDir, 'clone-done.png') });
  });
});
