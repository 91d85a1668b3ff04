import { Type } from '@sinclair/typebox';
import { searchEvents } from '../../../domain/events/event-log.js';

import { args, FeatureName, type McpTool, ProjectId, tool } from './tool.js';

/** The tool that reads the event log: who changed what, through which agent. */
export const EVENT_TOOLS: McpTool[] = [
  tool({
    name: 'search_events',
    title: 'Who changed what',
    description:
      'The event log (by flag, project, type or agent): the events of flags and projects the caller can see; the whole log for Admins.',
    input: args({
      featureName: Type.Optional(FeatureName),
      projectId: ProjectId,
      type: Type.Optional(Type.String({ maxLength: 100, description: 'An event type, such as feature-environment-enabled' })),
      via: Type.Optional(Type.String({ maxLength: 100, description: 'Only changes made through this agent, such as "Claude Code"' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: '20 unless given' })),
    }),
    effect: 'read',
    access: { permission: 'READ', project: 'flag if named' },
    async run({ featureName, projectId, type, via, limit }, call) {
      const { events, total } = await searchEvents(call.deps.db, call.actor, {
        ...(featureName ? { feature: `IS:${featureName}` } : {}),
        ...(projectId ? { project: `IS:${projectId}` } : {}),
        ...(type ? { type: `IS:${type}` } : {}),
        ...(via ? { via } : {}),
        limit: String(limit ?? 20),
      });
      const listed = events.map(
        ({ id, createdAt, type: eventType, createdBy, via: agent, project, environment, featureName: flag, label }) => ({
          id,
          createdAt,
          type: eventType,
          createdBy,
          via: agent ?? null,
          project,
          environment,
          featureName: flag,
          label,
        }),
      );
      return {
        text: `${total} events${total > listed.length ? ` (newest ${listed.length})` : ''}:\n${listed.map((e) => `${e.createdAt} ${e.type}${e.featureName ? ` ${e.featureName}` : ''}${e.environment ? ` in ${e.environment}` : ''} by ${e.createdBy}${e.via ? ` via ${e.via}` : ''}`).join('\n')}`,
        structured: { total, events: listed },
        link: call.link('/events'),
      };
    },
  }),
];
