import { Type } from '@sinclair/typebox';
import { updateTitle } from '../../../domain/change-requests/change-request-contents.js';
import { changeChangeRequestState } from '../../../domain/change-requests/change-request-states.js';
import { getChangeRequest, listPendingChangeRequests } from '../../../domain/change-requests/change-request-views.js';
import { BadDataError } from '../../../shared/errors.js';

import { args, changeRequestPage, Environment, type McpTool, Name, tool } from './tool.js';

/** The tools of change requests: sending the caller's draft for review, and reading one's state. */
export const CHANGE_REQUEST_TOOLS: McpTool[] = [
  tool({
    name: 'open_change_request',
    title: 'Send your draft change request for review',
    description: 'Sends your draft change request of a project environment (where protected changes went) for review, with a title.',
    input: args({
      projectId: Name('Project id'),
      environment: Environment,
      title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    }),
    effect: 'write',
    access: { permission: 'READ', project: 'projectId' },
    async run({ projectId, environment, title }, call) {
      const draft = (await listPendingChangeRequests(call.deps.db, projectId, call.actor)).find(
        (cr) => cr.environment === environment && cr.state === 'Draft',
      );
      if (!draft)
        throw new BadDataError(
          `You have no draft change request in ${projectId}/${environment}: a change to a protected environment starts one`,
        );
      await call.act(async (uow) => {
        if (title) await updateTitle(uow, projectId, draft.id, title);
        await changeChangeRequestState(uow, projectId, draft.id, { state: 'In review' });
      });
      const link = changeRequestPage(call, projectId, draft.id);
      return {
        text: `Change request #${draft.id} is in review; it needs ${draft.minApprovals} approval(s) from someone else. ${link}`,
        structured: { id: draft.id, project: projectId, environment, state: 'In review' },
        link,
      };
    },
  }),
  tool({
    name: 'change_request_status',
    title: 'A change request and its reviews',
    description: "A change request's state, its changes, approvals and comments.",
    input: args({ projectId: Name('Project id'), id: Type.Integer({ minimum: 1, description: 'The change request number' }) }),
    effect: 'read',
    access: { permission: 'READ', project: 'projectId' },
    async run({ projectId, id }, call) {
      const view = await getChangeRequest(call.deps.db, projectId, id);
      const changes = view.features.flatMap((feature) =>
        feature.changes.map((change) => ({ feature: feature.name, action: change.action })),
      );
      const structured = {
        id,
        project: projectId,
        environment: view.environment,
        title: view.title,
        state: view.state,
        minApprovals: view.minApprovals,
        approvals: view.approvals.map((a) => a.createdBy.username),
        changes,
      };
      return {
        text: `#${id} "${view.title}" in ${view.environment}: ${view.state}, ${view.approvals.length}/${view.minApprovals} approvals. Changes: ${changes.map((c) => `${c.action} ${c.feature}`).join(', ') || 'none'}.`,
        structured,
        link: changeRequestPage(call, projectId, id),
      };
    },
  }),
];
