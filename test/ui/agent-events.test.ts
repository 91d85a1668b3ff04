import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { textOf, waitForTexts } from '../helpers/browser.js';
import { UI_ADMIN_TOKEN, useUiServer } from '../helpers/ui-server.js';

// What an agent did through MCP, as a person reads it in the event log: the change, who it acted as, and the client
// it came through; and the filter that shows only such changes.

const PROJECT = 'agents';
const ui = useUiServer('agent-events', {
  seed: async (api) => {
    await api('POST', '/api/admin/projects', { id: PROJECT, name: 'Agents' });
  },
});

describe('the event log and agents', () => {
  test('shows "via Claude Code 1.2.3" on what an agent changed, and filters on it', async () => {
    const client = new Client({ name: 'Claude Code', version: '1.2.3' });
    const transport = new StreamableHTTPClientTransport(new URL(`${ui.server.baseUrl}/api/admin/mcp`), {
      requestInit: { headers: { Authorization: UI_ADMIN_TOKEN } },
    });
    await client.connect(transport);
    try {
      const result = await client.callTool({
        name: 'create_flag',
        arguments: { projectId: PROJECT, name: 'agent-made', type: 'release', description: 'Made by an agent' },
      });
      assert.equal(result.isError, undefined);
    } finally {
      await client.close();
    }
    await ui.api('POST', `/api/admin/projects/${PROJECT}/features`, { name: 'person-made' });

    const { page, server } = ui;
    await page.goto(`${server.baseUrl}/events?project=IS:${PROJECT}`);
    const labels = page.getByTestId('event').locator('.event-label');
    await waitForTexts(labels, (texts) => texts.join() === 'Flag created,Flag created,Project created');
    const agentEvent = page.getByTestId('event').filter({ hasText: 'agent-made' });
    assert.equal(await textOf(agentEvent.getByTestId('event-via')), 'via Claude Code 1.2.3');
    assert.equal(await page.getByTestId('event').filter({ hasText: 'person-made' }).getByTestId('event-via').count(), 0);

    await page.getByRole('form', { name: 'Event filters' }).getByLabel('Via agent').fill('claude');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/via=claude/);
    await waitForTexts(page.getByTestId('event').locator('.event-label'), (texts) => texts.length === 1);
    assert.equal(await textOf(page.getByTestId('event-total')), '1 events');
    assert.match(await textOf(page.getByTestId('event')), /agent-made/);
    assert.deepEqual(ui.problems, []);
  });
});
