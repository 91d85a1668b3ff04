/**
 * `label` and `summary` of events (spec 2.1), produced when events are read: a short name per type ("Flag
 * enabled") and one markdown sentence with the essential values ("**alice** enabled **checkout** in
 * **production**"). Every type Vexil writes has its own sentence; any other type gets a generic one.
 */
export interface DescribedEvent {
  type: string;
  createdBy: string;
  project: string | null;
  environment: string | null;
  featureName: string | null;
  data: unknown;
  preData: unknown;
}

type Fields = Record<string, unknown>;

/** Markdown-escapes a value so names with `*` or `_` cannot break or inject formatting. */
function md(value: unknown): string {
  return String(value ?? '').replace(/[\\`*_[\]<>#|]/g, (character) => `\\${character}`);
}

const bold = (value: unknown) => `**${md(value)}**`;

function fields(value: unknown): Fields {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Fields) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function strategyDetails(strategy: Fields): string {
  const parameters = fields(strategy.parameters);
  const parts: string[] = [];
  if (parameters.rollout !== undefined) parts.push(`${md(parameters.rollout)}% rollout`);
  if (parameters.userIds) parts.push(`users ${md(parameters.userIds)}`);
  if (parameters.IPs) parts.push(`IPs ${md(parameters.IPs)}`);
  if (parameters.hostNames) parts.push(`hosts ${md(parameters.hostNames)}`);
  const constraints = list(strategy.constraints).length;
  if (constraints > 0) parts.push(`${constraints} constraint${constraints === 1 ? '' : 's'}`);
  const segments = list(strategy.segments).length;
  if (segments > 0) parts.push(`${segments} segment${segments === 1 ? '' : 's'}`);
  if (strategy.disabled === true) parts.push('disabled');
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

function strategyChange(before: Fields, after: Fields): string {
  const rolloutBefore = fields(before.parameters).rollout;
  const rolloutAfter = fields(after.parameters).rollout;
  if (rolloutBefore !== undefined && rolloutAfter !== undefined && rolloutBefore !== rolloutAfter) {
    return `: rollout ${md(rolloutBefore)}% → ${md(rolloutAfter)}%`;
  }
  return strategyDetails(after);
}

function changedKeys(before: Fields, after: Fields, keys: string[]): string {
  const changed = keys.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  return changed.length > 0 ? ` (${changed.join(', ')})` : '';
}

interface Description {
  label: string;
  summary: (event: DescribedEvent, who: string, flag: string, env: string) => string;
}

const flagEvent = (label: string, verb: string): Description => ({ label, summary: (_e, who, flag) => `${who} ${verb} ${flag}` });

/** `**#5**`: the `#` needs no escaping inside a line, and escaped it would show as `\#`. */
const request = (e: DescribedEvent) => `**#${md(fields(e.data).changeRequestId ?? fields(e.preData).changeRequestId)}**`;

/** "updateStrategy on **checkout**", "deleteSegment of segment **3**": a change as the events carry it. */
function changeSubject(change: unknown, flag: string): string {
  const { action, feature, payload } = fields(change);
  return feature === undefined ? `${md(action)} of segment ${bold(fields(payload).id)}` : `${md(action)} on ${flag}`;
}

const plural = (count: unknown, noun: string) => `${md(count)} ${noun}${count === 1 ? '' : 's'}`;

const CHANGE_REQUEST_DESCRIPTIONS: Record<string, Description> = {
  'change-request-created': {
    label: 'Change request created',
    summary: (e, who, _flag, env) => `${who} opened change request ${request(e)} for ${env} in project ${bold(e.project)}`,
  },
  'change-added': {
    label: 'Change added',
    summary: (e, who, flag) => `${who} added ${changeSubject(fields(e.data).change, flag)} to change request ${request(e)}`,
  },
  'change-edited': {
    label: 'Change edited',
    summary: (e, who, flag) => `${who} edited ${changeSubject(fields(e.data).change, flag)} in change request ${request(e)}`,
  },
  'change-discarded': {
    label: 'Change discarded',
    summary: (e, who, flag) => `${who} discarded ${changeSubject(fields(e.preData).change, flag)} from change request ${request(e)}`,
  },
  'change-request-discarded': {
    label: 'Change request discarded',
    summary: (e, who) => `${who} discarded the draft change request ${request(e)}`,
  },
  'change-request-sent-to-review': {
    label: 'Change request sent to review',
    summary: (e, who) =>
      fields(e.data).approvalsCleared === undefined
        ? `${who} sent change request ${request(e)} to review`
        : `${who} edited change request ${request(e)}, which returned to review (${plural(fields(e.data).approvalsCleared, 'approval')} withdrawn)`,
  },
  'change-request-approval-added': {
    label: 'Change request approval added',
    summary: (e, who) =>
      `${who} approved change request ${request(e)} (${md(fields(e.data).approvals)} of ${plural(fields(e.data).minApprovals, 'required approval')})`,
  },
  'change-request-approved': {
    label: 'Change request approved',
    summary: (e, who) => `${who} gave change request ${request(e)} its last required approval: it is approved`,
  },
  'change-request-rejected': {
    label: 'Change request rejected',
    summary: (e, who) => `${who} rejected change request ${request(e)}${fields(e.data).comment ? `: ${md(fields(e.data).comment)}` : ''}`,
  },
  'change-request-cancelled': { label: 'Change request cancelled', summary: (e, who) => `${who} cancelled change request ${request(e)}` },
  'change-request-applied': {
    label: 'Change request applied',
    summary: (e, who, _flag, env) => `${who} applied change request ${request(e)} (${plural(fields(e.data).changes, 'change')}) to ${env}`,
  },
  'change-request-scheduled': {
    label: 'Change request scheduled',
    summary: (e, who) => `${who} scheduled change request ${request(e)} to be applied at ${bold(fields(e.data).scheduledAt)}`,
  },
  'change-request-scheduled-application-success': {
    label: 'Scheduled change request applied',
    summary: (e, who) => `${who} applied change request ${request(e)} as scheduled for ${bold(fields(e.data).scheduledAt)}`,
  },
  'change-request-scheduled-application-failure': {
    label: 'Scheduled change request failed',
    summary: (e, who) => `${who} could not apply change request ${request(e)} as scheduled: ${md(fields(e.data).reason)}`,
  },
  'change-request-configuration-updated': {
    label: 'Change request configuration updated',
    summary: (e, who, _flag, env) =>
      fields(e.data).changeRequestsEnabled
        ? `${who} required change requests for ${env} in project ${bold(e.project)} (${plural(fields(e.data).requiredApprovals, 'approval')})`
        : `${who} turned off change requests for ${env} in project ${bold(e.project)}`,
  },
  'change-request-title-updated': {
    label: 'Change request retitled',
    summary: (e, who) => `${who} retitled change request ${request(e)} to ${bold(fields(e.data).title)}`,
  },
  'change-request-comment-added': {
    label: 'Change request comment',
    summary: (e, who) => `${who} commented on change request ${request(e)}`,
  },
  'review-bypassed': {
    label: 'Change request bypassed',
    summary: (e, who, flag, env) => {
      const segment = fields(e.data).segmentId;
      if (segment !== undefined) return `${who} changed segment ${bold(segment)} directly, bypassing change requests where it is used`;
      return `${who} changed ${flag}${e.environment ? ` in ${env}` : ''} directly, bypassing its change requests`;
    },
  },
};

const DESCRIPTIONS: Record<string, Description> = {
  'feature-created': {
    label: 'Flag created',
    summary: (e, who, flag) => `${who} created ${flag} (${md(fields(e.data).type ?? 'release')}) in project ${bold(e.project)}`,
  },
  'feature-metadata-updated': {
    label: 'Flag updated',
    summary: (e, who, flag) => `${who} updated ${flag}${changedKeys(fields(e.preData), fields(e.data), ['description', 'impressionData'])}`,
  },
  // Unleash names two changes so: a flag's type, and (with no flag) how long flags of a type are expected to live.
  'feature-type-updated': {
    label: 'Flag type changed',
    summary: (e, who, flag) => {
      if (e.featureName) return `${who} changed the type of ${flag} from ${bold(fields(e.preData).type)} to ${bold(fields(e.data).type)}`;
      const days = fields(e.data).lifetimeDays;
      return `${who} set the expected lifetime of ${bold(fields(e.data).name)} flags to ${typeof days === 'number' ? `${days} days` : 'permanent'}`;
    },
  },
  'feature-archived': flagEvent('Flag archived', 'archived'),
  'feature-revived': flagEvent('Flag revived', 'revived'),
  'feature-deleted': flagEvent('Flag deleted', 'deleted'),
  'feature-stale-on': flagEvent('Flag marked stale', 'marked as stale'),
  'feature-stale-off': flagEvent('Flag no longer stale', 'marked as no longer stale'),
  'feature-project-change': {
    label: 'Flag moved',
    summary: (e, who, flag) => `${who} moved ${flag} from project ${bold(fields(e.data).oldProject)} to ${bold(fields(e.data).newProject)}`,
  },
  'feature-environment-enabled': { label: 'Flag enabled', summary: (_e, who, flag, env) => `${who} enabled ${flag} in ${env}` },
  'feature-environment-disabled': { label: 'Flag disabled', summary: (_e, who, flag, env) => `${who} disabled ${flag} in ${env}` },
  'feature-strategy-add': {
    label: 'Strategy added',
    summary: (e, who, flag, env) =>
      `${who} added strategy ${bold(fields(e.data).name)}${strategyDetails(fields(e.data))} to ${flag} in ${env}`,
  },
  'feature-strategy-update': {
    label: 'Strategy updated',
    summary: (e, who, flag, env) =>
      `${who} updated strategy ${bold(fields(e.data).name)} of ${flag} in ${env}${strategyChange(fields(e.preData), fields(e.data))}`,
  },
  'feature-strategy-remove': {
    label: 'Strategy removed',
    summary: (e, who, flag, env) => `${who} removed strategy ${bold(fields(e.preData).name)} from ${flag} in ${env}`,
  },
  'strategy-order-changed': {
    label: 'Strategies reordered',
    summary: (_e, who, flag, env) => `${who} reordered the strategies of ${flag} in ${env}`,
  },
  'feature-environment-variants-updated': {
    label: 'Variants updated',
    summary: (e, who, flag, env) => {
      const names = list(fields(e.data).variants).map((v) => md(fields(v).name));
      return `${who} set the variants of ${flag} in ${env} to ${names.length > 0 ? names.join(', ') : 'none'}`;
    },
  },
  'feature-link-added': {
    label: 'Flag link added',
    summary: (e, who, flag) => `${who} linked ${flag} to ${md(fields(e.data).url)}`,
  },
  'feature-link-updated': {
    label: 'Flag link changed',
    summary: (e, who, flag) => `${who} changed a link of ${flag} to ${md(fields(e.data).url)}`,
  },
  'feature-link-removed': {
    label: 'Flag link removed',
    summary: (e, who, flag) => `${who} removed the link of ${flag} to ${md(fields(e.preData).url)}`,
  },
  'feature-tagged': {
    label: 'Flag tagged',
    summary: (e, who, flag) => `${who} tagged ${flag} with ${bold(`${fields(e.data).type}:${fields(e.data).value}`)}`,
  },
  'feature-untagged': {
    label: 'Flag untagged',
    summary: (e, who, flag) => `${who} removed the tag ${bold(`${fields(e.preData).type}:${fields(e.preData).value}`)} from ${flag}`,
  },
  'feature-favorited': flagEvent('Flag favorited', 'favorited'),
  'feature-unfavorited': flagEvent('Flag unfavorited', 'unfavorited'),
  'feature-dependency-added': {
    label: 'Dependency added',
    summary: (e, who, flag) =>
      `${who} made ${flag} depend on ${bold(fields(e.data).feature)}${fields(e.data).enabled === false ? ' being disabled' : ''}`,
  },
  'feature-dependency-removed': {
    label: 'Dependency removed',
    summary: (e, who, flag) => `${who} removed the dependency of ${flag} on ${bold(fields(e.preData).feature)}`,
  },
  'feature-dependencies-removed': flagEvent('Dependencies removed', 'removed all dependencies of'),
  'feature-completed': {
    label: 'Flag completed',
    summary: (e, who, flag) => `${who} marked ${flag} as completed (${md(fields(e.data).status)})`,
  },
  'feature-uncompleted': flagEvent('Flag uncompleted', 'reopened'),
  'project-created': { label: 'Project created', summary: (e, who) => `${who} created project ${bold(e.project)}` },
  'project-updated': {
    label: 'Project updated',
    summary: (e, who) =>
      `${who} updated project ${bold(e.project)}${changedKeys(fields(e.preData), fields(e.data), ['name', 'description', 'mode', 'defaultStickiness'])}`,
  },
  'project-deleted': { label: 'Project deleted', summary: (e, who) => `${who} deleted project ${bold(e.project)}` },
  'project-environment-added': {
    label: 'Environment added to project',
    summary: (e, who, _flag, env) => `${who} enabled environment ${env} in project ${bold(e.project)}`,
  },
  'project-environment-removed': {
    label: 'Environment removed from project',
    summary: (e, who, _flag, env) => `${who} removed environment ${env} from project ${bold(e.project)}`,
  },
  'default-strategy-updated': {
    label: 'Default strategy updated',
    summary: (e, who, _flag, env) => `${who} set the default strategy of project ${bold(e.project)} in ${env}`,
  },
  'project-favorited': { label: 'Project favorited', summary: (e, who) => `${who} favorited project ${bold(e.project)}` },
  'project-unfavorited': { label: 'Project unfavorited', summary: (e, who) => `${who} unfavorited project ${bold(e.project)}` },
  'environment-created': {
    label: 'Environment created',
    summary: (e, who, _flag, env) => `${who} created environment ${env} (${md(fields(e.data).type)})`,
  },
  'environment-updated': {
    label: 'Environment updated',
    summary: (e, who, _flag, env) =>
      `${who} updated environment ${env}${changedKeys(fields(e.preData), fields(e.data), ['type', 'sortOrder', 'enabled'])}`,
  },
  'environment-deleted': { label: 'Environment deleted', summary: (_e, who, _flag, env) => `${who} deleted environment ${env}` },
  'edge-client-created': {
    label: 'Edge client made',
    summary: (e, who) => `${who} made the edge client ${bold(fields(e.data).name)} (${md(fields(e.data).clientId)})`,
  },
  'edge-client-deleted': {
    label: 'Edge client deleted',
    summary: (e, who) => `${who} deleted the edge client ${bold(fields(e.preData).name)} (${md(fields(e.preData).clientId)})`,
  },
  'experiment-metric-created': {
    label: 'Experiment metric created',
    summary: (e, who) => `${who} created the experiment metric ${bold(fields(e.data).name)} in ${bold(e.environment)}`,
  },
  'experiment-metric-updated': {
    label: 'Experiment metric updated',
    summary: (e, who) => `${who} updated the experiment metric ${bold(fields(e.data).name)} in ${bold(e.environment)}`,
  },
  'experiment-metric-deleted': {
    label: 'Experiment metric deleted',
    summary: (e, who) => `${who} deleted the experiment metric ${bold(fields(e.preData).name)} in ${bold(e.environment)}`,
  },
  'experiment-created': {
    label: 'Experiment created',
    summary: (e, who, flag, env) => `${who} created the experiment ${bold(fields(e.data).name)} on ${flag} in ${env}`,
  },
  'experiment-updated': {
    label: 'Experiment updated',
    summary: (e, who, flag, env) => `${who} updated the experiment ${bold(fields(e.data).name)} on ${flag} in ${env}`,
  },
  'experiment-deleted': {
    label: 'Experiment deleted',
    summary: (e, who, flag, env) => `${who} deleted the experiment ${bold(fields(e.preData).name)} on ${flag} in ${env}`,
  },
  'experiment-started': {
    label: 'Experiment started',
    summary: (e, who, flag, env) => `${who} started the experiment ${bold(fields(e.data).name)} on ${flag} in ${env}`,
  },
  'experiment-phase-started': {
    label: 'Experiment phase started',
    summary: (e, who, flag, env) =>
      `${who} changed the variants of ${flag} in ${env}: the experiment ${bold(fields(e.data).name)} starts phase ${md(fields(e.data).phase)}`,
  },
  'experiment-stopped': {
    label: 'Experiment stopped',
    summary: (e, who, flag, env) => `${who} stopped the experiment ${bold(fields(e.data).name)} on ${flag} in ${env}`,
  },
  'experiment-data-source-created': {
    label: 'Experiment data source created',
    summary: (e, who) => `${who} added the warehouse ${bold(fields(e.data).name)} (${md(fields(e.data).address)}) for experiments`,
  },
  'experiment-data-source-deleted': {
    label: 'Experiment data source deleted',
    summary: (e, who) => `${who} removed the warehouse ${bold(fields(e.preData).name)}`,
  },
  'code-references-pushed': {
    label: 'Code references pushed',
    summary: (e, who) =>
      `${who} pushed ${md(fields(e.data).references)} code references to ${md(fields(e.data).flags)} flags from ${bold(fields(e.data).repository)} (${md(fields(e.data).branch)} at ${md(fields(e.data).commit)})`,
  },
  'feature-removed-from-code': {
    label: 'Flag removed from code',
    summary: (e, who, flag) =>
      `The last reference to ${flag} left the code in commit ${md(fields(e.data).commit)} of ${bold(fields(e.data).repository)} (${md(fields(e.data).branch)}), pushed by ${who}`,
  },
  'feature-ready-for-removal': {
    label: 'Flag ready to remove',
    summary: (e, _who, flag, env) =>
      `${flag} is ${md(fields(e.data).verdict)} in ${env}: ${list(fields(e.data).reasons).map(md).join('; ')}`,
  },
  'experiment-shipped': {
    label: 'Experiment shipped',
    summary: (e, who, flag, env) =>
      `${who} shipped variant ${bold(fields(e.data).variant)} of the experiment ${bold(fields(e.data).name)} on ${flag} in ${env}`,
  },
  'api-token-created': {
    label: 'API token created',
    summary: (e, who) => `${who} created the ${md(fields(e.data).type)} API token ${bold(fields(e.data).tokenName)}`,
  },
  'api-token-updated': {
    label: 'API token updated',
    summary: (e, who) =>
      `${who} set the ${md(fields(e.data).type)} API token ${bold(fields(e.data).tokenName)} to expire at ${md(fields(e.data).expiresAt ?? 'never')}`,
  },
  'api-token-deleted': {
    label: 'API token deleted',
    summary: (e, who) => `${who} deleted the ${md(fields(e.preData).type)} API token ${bold(fields(e.preData).tokenName)}`,
  },
  'user-created': {
    label: 'User created',
    summary: (e, who) => `${who} created user ${bold(fields(e.data).username ?? fields(e.data).email)}`,
  },
  'user-updated': {
    label: 'User updated',
    summary: (e, who) =>
      `${who} updated user ${bold(fields(e.data).username ?? fields(e.data).email)}${changedKeys(fields(e.preData), fields(e.data), ['name', 'email', 'rootRole'])}`,
  },
  'user-deleted': {
    label: 'User deleted',
    summary: (e, who) => `${who} deleted user ${bold(fields(e.preData).username ?? fields(e.preData).email)}`,
  },
  'user-password-changed': {
    label: 'Password changed',
    summary: (e, who) => `${who} changed the password of ${bold(fields(e.data).username ?? fields(e.data).email)}`,
  },
  'user-sessions-ended': {
    label: 'Sessions ended',
    summary: (e, who) => {
      const count = Number(fields(e.data).sessions ?? 0);
      return `${who} ended ${count === 1 ? 'a session' : `${count} sessions`} of ${bold(fields(e.data).username ?? fields(e.data).email)}`;
    },
  },
  'user-signed-in': {
    label: 'Signed in',
    summary: (e) => `${bold(fields(e.data).username)} signed in${fields(e.data).authType === 'oidc' ? ' with the identity provider' : ''}`,
  },
  'user-sign-in-refused': {
    label: 'Sign-in refused',
    summary: (e) => `A sign-in as ${bold(fields(e.data).username ?? 'someone unknown')} was refused: ${md(fields(e.data).reason)}`,
  },
  'role-created': {
    label: 'Role created',
    summary: (e, who) => `${who} created the role ${bold(fields(e.data).name)}`,
  },
  'role-updated': {
    label: 'Role updated',
    summary: (e, who) =>
      `${who} updated the role ${bold(fields(e.data).name)}${changedKeys(fields(e.preData), fields(e.data), ['name', 'description', 'permissions'])}`,
  },
  'role-deleted': {
    label: 'Role deleted',
    summary: (e, who) => `${who} deleted the role ${bold(fields(e.preData).name)}`,
  },
  'user-deactivated': {
    label: 'User deactivated',
    summary: (e, who) => `${who} deactivated ${bold(fields(e.data).username ?? fields(e.data).email)}, ending their sessions and tokens`,
  },
  'user-reactivated': {
    label: 'User reactivated',
    summary: (e, who) => `${who} reactivated ${bold(fields(e.data).username ?? fields(e.data).email)}`,
  },
  'scim-token-created': {
    label: 'SCIM token created',
    summary: (e, who) => `${who} made a new SCIM provisioning token${fields(e.data).replaced ? ', replacing the previous one' : ''}`,
  },
  'scim-token-deleted': {
    label: 'SCIM token deleted',
    summary: (_e, who) => `${who} deleted the SCIM provisioning token, turning provisioning off`,
  },
  'pat-created': {
    label: 'Personal access token created',
    summary: (e, who) => `${who} created the personal access token ${bold(fields(e.data).description)}`,
  },
  'pat-deleted': {
    label: 'Personal access token deleted',
    summary: (e, who) => `${who} deleted the personal access token ${bold(fields(e.preData).description)}`,
  },
  'mcp-token-created': {
    label: 'Agent granted access',
    summary: (e, who) => `${who} granted the agent ${bold(fields(e.data).clientName)} access through MCP until ${fields(e.data).expiresAt}`,
  },
  'mcp-token-revoked': {
    label: 'Agent access revoked',
    summary: (_e, who) => `${who} revoked an agent's access through MCP`,
  },
  'tag-created': {
    label: 'Tag created',
    summary: (e, who) => `${who} created tag ${bold(`${fields(e.data).type}:${fields(e.data).value}`)}`,
  },
  'tag-deleted': {
    label: 'Tag deleted',
    summary: (e, who) => `${who} deleted tag ${bold(`${fields(e.preData).type}:${fields(e.preData).value}`)}`,
  },
  'tag-type-created': { label: 'Tag type created', summary: (e, who) => `${who} created tag type ${bold(fields(e.data).name)}` },
  'tag-type-updated': { label: 'Tag type updated', summary: (e, who) => `${who} updated tag type ${bold(fields(e.data).name)}` },
  'tag-type-deleted': { label: 'Tag type deleted', summary: (e, who) => `${who} deleted tag type ${bold(fields(e.preData).name)}` },
  'segment-created': { label: 'Segment created', summary: (e, who) => `${who} created segment ${bold(fields(e.data).name)}` },
  'segment-updated': { label: 'Segment updated', summary: (e, who) => `${who} updated segment ${bold(fields(e.data).name)}` },
  'segment-deleted': { label: 'Segment deleted', summary: (e, who) => `${who} deleted segment ${bold(fields(e.preData).name)}` },
  'setting-updated': {
    label: 'Setting updated',
    summary: (e, who) => `${who} updated the setting ${bold(fields(e.data).id)}`,
  },
  'strategy-created': { label: 'Strategy created', summary: (e, who) => `${who} created strategy ${bold(fields(e.data).name)}` },
  'strategy-updated': { label: 'Strategy updated', summary: (e, who) => `${who} updated strategy ${bold(fields(e.data).name)}` },
  'strategy-deleted': { label: 'Strategy deleted', summary: (e, who) => `${who} deleted strategy ${bold(fields(e.preData).name)}` },
  'strategy-deprecated': { label: 'Strategy deprecated', summary: (e, who) => `${who} deprecated strategy ${bold(fields(e.data).name)}` },
  'strategy-reactivated': {
    label: 'Strategy reactivated',
    summary: (e, who) => `${who} reactivated strategy ${bold(fields(e.data).name)}`,
  },
  'context-field-created': {
    label: 'Context field created',
    summary: (e, who) => `${who} created context field ${bold(fields(e.data).name)}`,
  },
  'context-field-updated': {
    label: 'Context field updated',
    summary: (e, who) => `${who} updated context field ${bold(fields(e.data).name)}`,
  },
  'context-field-deleted': {
    label: 'Context field deleted',
    summary: (e, who) => `${who} deleted context field ${bold(fields(e.preData).name)}`,
  },
  'addon-config-created': {
    label: 'Integration created',
    summary: (e, who) => `${who} created the ${bold(fields(e.data).provider)} integration ${bold(fields(e.data).id)}`,
  },
  'addon-config-updated': {
    label: 'Integration updated',
    summary: (e, who) =>
      `${who} updated the ${bold(fields(e.data).provider)} integration ${bold(fields(e.data).id)}${changedKeys(fields(e.preData), fields(e.data), ['provider', 'description', 'enabled', 'parameters', 'events', 'projects', 'environments'])}`,
  },
  'addon-config-deleted': {
    label: 'Integration deleted',
    summary: (e, who) => `${who} deleted the ${bold(fields(e.preData).provider)} integration ${bold(fields(e.preData).id)}`,
  },
  'public-signup-token-created': {
    label: 'Invite link made',
    summary: (e, who) => `${who} made the invite link ${bold(fields(e.data).name)}, valid until ${md(fields(e.data).expiresAt)}`,
  },
  'public-signup-token-updated': {
    label: 'Invite link changed',
    summary: (e, who) =>
      `${who} ${fields(e.data).enabled === false && fields(e.preData).enabled !== false ? 'turned off' : 'changed'} the invite link ${bold(fields(e.data).name)}`,
  },
  'public-signup-token-user-added': {
    label: 'Account made through an invite link',
    summary: (e, who) => `${who} let a person make their account through the invite link ${bold(fields(e.data).name)}`,
  },
  'application-updated': {
    label: 'Application described',
    summary: (e, who) => `${who} changed the description of the application ${bold(fields(e.data).appName)}`,
  },
  'application-deleted': {
    label: 'Application deleted',
    summary: (e, who) => `${who} deleted the application ${bold(fields(e.preData).appName)}`,
  },
  'application-created': {
    label: 'Application registered',
    summary: (e, who) => `${who} registered the application ${bold(fields(e.data).appName)} in ${bold(fields(e.data).environment)}`,
  },
  'group-created': {
    label: 'Group created',
    summary: (e, who) => `${who} created the group ${bold(fields(e.data).name)}`,
  },
  'group-updated': {
    label: 'Group updated',
    summary: (e, who) =>
      `${who} updated the group ${bold(fields(e.data).name)}${changedKeys(fields(e.preData), fields(e.data), ['name', 'description', 'mappingsSSO', 'rootRole', 'users'])}`,
  },
  'group-deleted': {
    label: 'Group deleted',
    summary: (e, who) => `${who} deleted the group ${bold(fields(e.preData).name)}`,
  },
  'group-user-added': {
    label: 'Joined a group',
    summary: (e, who) => `${who} added ${bold(fields(e.data).user)} to the group ${bold(fields(e.data).group)}`,
  },
  'group-user-removed': {
    label: 'Left a group',
    summary: (e, who) => `${who} removed ${bold(fields(e.preData).user)} from the group ${bold(fields(e.preData).group)}`,
  },
  'service-account-created': {
    label: 'Service account created',
    summary: (e, who) => `${who} created the service account ${bold(fields(e.data).username)}`,
  },
  'service-account-updated': {
    label: 'Service account updated',
    summary: (e, who) =>
      `${who} updated the service account ${bold(fields(e.data).username)}${changedKeys(fields(e.preData), fields(e.data), ['name', 'rootRole'])}`,
  },
  'service-account-deleted': {
    label: 'Service account deleted',
    summary: (e, who) => `${who} deleted the service account ${bold(fields(e.preData).username)}`,
  },
  'project-access-added': {
    label: 'Project access given',
    summary: (e, who) => {
      const data = fields(e.data);
      const holders = [...list(data.users).map((id) => `user ${md(id)}`), ...list(data.groups).map((id) => `group ${md(id)}`)].join(', ');
      return `${who} gave ${holders || 'nobody'} roles ${md(list(data.roles).join(', '))} in project ${bold(e.project)}`;
    },
  },
  'project-access-user-roles-updated': {
    label: 'Project roles changed',
    summary: (e, who) =>
      `${who} set the roles of user ${bold(fields(e.data).userId)} in project ${bold(e.project)} to ${md(list(fields(e.data).roles).join(', '))}`,
  },
  'project-access-group-roles-updated': {
    label: 'Project roles changed',
    summary: (e, who) =>
      `${who} set the roles of group ${bold(fields(e.data).groupId)} in project ${bold(e.project)} to ${md(list(fields(e.data).roles).join(', '))}`,
  },
  'project-access-user-roles-deleted': {
    label: 'Project access removed',
    summary: (e, who) => `${who} removed user ${bold(fields(e.preData).userId)} from project ${bold(e.project)}`,
  },
  'project-access-group-roles-deleted': {
    label: 'Project access removed',
    summary: (e, who) => `${who} removed group ${bold(fields(e.preData).groupId)} from project ${bold(e.project)}`,
  },
  'release-plan-template-created': {
    label: 'Release template created',
    summary: (e, who) =>
      `${who} created the release plan template ${bold(fields(e.data).name)} with ${list(fields(e.data).milestones).length} milestones`,
  },
  'release-plan-template-updated': {
    label: 'Release template updated',
    summary: (e, who) => `${who} updated the release plan template ${bold(fields(e.data).name)}`,
  },
  'release-plan-template-archived': {
    label: 'Release template archived',
    summary: (e, who) => `${who} archived the release plan template ${bold(fields(e.preData).name)}`,
  },
  'release-plan-template-deleted': {
    label: 'Release template deleted',
    summary: (e, who) => `${who} deleted the release plan template ${bold(fields(e.preData).name)}`,
  },
  'release-plan-added': {
    label: 'Release plan added',
    summary: (e, who, flag, env) => `${who} added the release plan ${bold(fields(e.data).name)} to ${flag} in ${env}`,
  },
  'release-plan-removed': {
    label: 'Release plan removed',
    summary: (e, who, flag, env) => `${who} removed the release plan ${bold(fields(e.preData).name)} from ${flag} in ${env}`,
  },
  'release-plan-milestone-started': {
    label: 'Milestone started',
    summary: (e, who, flag, env) => {
      const data = fields(e.data);
      const cause = data.cause === 'schedule' ? ' on schedule' : data.cause === 'safeguard' ? ' (safeguard rollback)' : '';
      return `${who} started the milestone ${bold(data.milestoneName)} of ${flag} in ${env}${cause}`;
    },
  },
  'release-plan-progressions-paused': {
    label: 'Release plan paused',
    summary: (e, who, flag, env) => `${who} paused the release plan of ${flag} in ${env}: ${md(fields(e.data).reason)}`,
  },
  'release-plan-progressions-resumed': {
    label: 'Release plan resumed',
    summary: (_e, who, flag, env) => `${who} resumed the release plan of ${flag} in ${env}`,
  },
  'release-plan-progression-changed': {
    label: 'Milestone timing set',
    summary: (e, who, flag, env) => {
      const data = fields(e.data);
      return `${who} set the milestone ${bold(data.milestoneName)} of ${flag} in ${env} to move on after ${md(fields(data.transitionCondition).intervalMinutes)} min`;
    },
  },
  'release-plan-progression-deleted': {
    label: 'Milestone timing removed',
    summary: (e, who, flag, env) =>
      `${who} set the milestone ${bold(fields(e.preData).milestoneName)} of ${flag} in ${env} to move on only by hand`,
  },
  'safeguard-changed': {
    label: 'Safeguard set',
    summary: (e, who, flag, env) => {
      const safeguard = fields(fields(e.data).safeguard);
      const metric = fields(safeguard.impactMetric);
      const condition = fields(safeguard.triggerCondition);
      return `${who} guarded the release plan of ${flag} in ${env} with ${bold(metric.metricName)} ${md(condition.operator)} ${md(condition.threshold)}`;
    },
  },
  'safeguard-deleted': {
    label: 'Safeguard removed',
    summary: (_e, who, flag, env) => `${who} removed the safeguard of the release plan of ${flag} in ${env}`,
  },
  'safeguard-triggered': {
    label: 'Safeguard triggered',
    summary: (e, who, flag, env) => `${who} tripped the safeguard of ${flag} in ${env}: ${md(fields(e.data).reason)}`,
  },
  'signal-endpoint-created': {
    label: 'Signal endpoint created',
    summary: (e, who) => `${who} created the signal endpoint ${bold(fields(e.data).name)}`,
  },
  'signal-endpoint-updated': {
    label: 'Signal endpoint updated',
    summary: (e, who) =>
      `${who} updated the signal endpoint ${bold(fields(e.data).name)}${changedKeys(fields(e.preData), fields(e.data), ['name', 'description', 'enabled'])}`,
  },
  'signal-endpoint-deleted': {
    label: 'Signal endpoint deleted',
    summary: (e, who) => `${who} deleted the signal endpoint ${bold(fields(e.preData).name)}`,
  },
  'signal-endpoint-token-created': {
    label: 'Signal token created',
    summary: (e, who) =>
      `${who} created the token ${bold(fields(e.data).name)} of signal endpoint ${bold(fields(e.data).signalEndpointId)}`,
  },
  'signal-endpoint-token-deleted': {
    label: 'Signal token deleted',
    summary: (e, who) =>
      `${who} deleted the token ${bold(fields(e.preData).name)} of signal endpoint ${bold(fields(e.preData).signalEndpointId)}`,
  },
  'actions-created': {
    label: 'Action set created',
    summary: (e, who) => `${who} created the action set ${bold(fields(e.data).name)} in project ${bold(e.project)}`,
  },
  'actions-updated': {
    label: 'Action set updated',
    summary: (e, who) => `${who} updated the action set ${bold(fields(e.data).name)} in project ${bold(e.project)}`,
  },
  'actions-deleted': {
    label: 'Action set deleted',
    summary: (e, who) => `${who} deleted the action set ${bold(fields(e.preData).name)} in project ${bold(e.project)}`,
  },
  ...CHANGE_REQUEST_DESCRIPTIONS,
};

function humanize(type: string): string {
  const words = type.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function describeEvent(event: DescribedEvent): { label: string; summary: string } {
  const who = bold(event.createdBy);
  const flag = bold(event.featureName);
  const env = bold(event.environment);
  const description = DESCRIPTIONS[event.type];
  if (description) return { label: description.label, summary: description.summary(event, who, flag, env) };
  const subject = event.featureName ? ` on ${flag}` : event.project ? ` in project ${bold(event.project)}` : '';
  return { label: humanize(event.type), summary: `${who} triggered **${md(event.type)}**${subject}` };
}
