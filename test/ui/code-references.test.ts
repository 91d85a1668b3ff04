import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { textOf, waitForTexts } from '../helpers/browser.js';
import { useUiServer } from '../helpers/ui-server.js';

// A flag's code references on its page, in a real browser: each place linked to its line on the host, with the
// lines around it, grouped by repository and branch; and a flag whose last reference left the code says in which
// commit.

const COMMITS = ['4f1c2e3d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d', '5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d4f1c2e3d'];

describe("a flag's code references on its page", { timeout: 180_000 }, () => {
  const ui = useUiServer('code-references', {
    seed: async (api) => {
      await api('POST', '/api/admin/projects', { id: 'checkout', name: 'Checkout' });
      await api('POST', '/api/admin/projects/checkout/features', { name: 'one-page-checkout' });
      await api('POST', '/api/admin/projects/checkout/features', { name: 'old-banner' });
      const push = (commit: string, flags: string[]) =>
        api('POST', '/api/admin/code-references', {
          repository: 'acme/shop',
          branch: 'main',
          commit,
          urlTemplate: 'https://github.com/acme/shop/blob/{commit}/{file}#L{line}',
          references: flags.flatMap((flag) => [
            {
              flag,
              file: 'src/checkout/page.tsx',
              line: 14,
              language: 'TSX',
              call: 'useFlag',
              expression: `'${flag}'`,
              context: [
                'export function CheckoutPage() {',
                `  const onePage = useFlag('${flag}');`,
                '  return onePage ? <OnePage /> : <Steps />;',
              ],
            },
            { flag, file: 'server/orders.py', line: 88, language: 'Python', call: 'is_enabled', expression: 'ONE_PAGE', context: [] },
          ]),
        });
      await push(COMMITS[0]!, ['one-page-checkout', 'old-banner']);
      await push(COMMITS[1]!, ['one-page-checkout']);
    },
  });

  test('each reference links to its line with the code around it; a flag gone from the code names the commit', async () => {
    const { page } = ui;
    await page.goto(`${ui.server.baseUrl}/projects/checkout/flags/one-page-checkout`);
    const card = page.getByRole('region', { name: 'Code references' });
    assert.equal(await textOf(card.locator('strong', { hasText: 'acme/shop' })), `acme/shop · main @ ${COMMITS[1]!.slice(0, 7)}`);
    const links = card.getByRole('link');
    assert.deepEqual(await links.allTextContents(), ['server/orders.py:88', 'src/checkout/page.tsx:14']);
    assert.deepEqual(await Promise.all((await links.all()).map((link) => link.getAttribute('href'))), [
      `https://github.com/acme/shop/blob/${COMMITS[1]}/server/orders.py#L88`,
      `https://github.com/acme/shop/blob/${COMMITS[1]}/src/checkout/page.tsx#L14`,
    ]);
    assert.match(await textOf(card), /Python, is_enabled\(ONE_PAGE\)/);
    assert.equal(
      await textOf(card.locator('pre')),
      "export function CheckoutPage() {\n  const onePage = useFlag('one-page-checkout');\n  return onePage ? <OnePage /> : <Steps />;",
    );
    const [verdict] = await waitForTexts(card.getByTestId('removal-readiness'), (texts) => texts.length === 1);
    assert.equal(verdict, 'production: keep (off for everyone for 0 days: ready after 21 unchanged)');
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: join(ui.workDir, 'code-references.png') });

    await page.goto(`${ui.server.baseUrl}/projects/checkout/flags/old-banner`);
    const gone = page.getByRole('region', { name: 'Code references' });
    const [said] = await waitForTexts(gone, (texts) => /Removed from code/.test(texts[0] ?? ''));
    assert.match(
      await textOf(gone.getByTestId('removal-readiness')),
      /^production: ready to archive \(no pushed code reads it since commit 5a6b7c8/,
    );
    assert.match(said ?? '', new RegExp(`Removed from code in commit ${COMMITS[1]!.slice(0, 7)} of acme/shop \\(main\\)`));

    // The flags page filters on it: only the flag a pushed repository still reads.
    await page.goto(`${ui.server.baseUrl}/flags?project=IS:checkout&codeReferences=IS:true`);
    assert.equal(await page.getByTestId('filter-codeReferences').getByLabel('Code references values').inputValue(), 'true');
    const rows = page.getByTestId('flag-row');
    const listed = await waitForTexts(rows, (texts) => texts.length === 1 && texts[0]!.includes('one-page-checkout'));
    assert.doesNotMatch(listed.join(' '), /old-banner/);
    assert.deepEqual(ui.problems, []);
  });
});
