import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import {
  countEvents,
  countFeatureEvents,
  deprecatedEventSearch,
  eventCreators,
  exportedEventView,
  exportEvents,
  type ExportedEventRow,
  recentEvents,
  searchEvents,
  streamEvents,
  type EventView,
} from '../../../domain/events/event-log.js';
import { boundedRead } from '../../../db/bounded-read.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { readBoundsOf } from '../../read-bounds.js';
import {
  DeprecatedSearchEventsSchema,
  EventCreatorsSchema,
  EventExportQuerySchema,
  EventSearchQuerySchema,
  EventSearchResponseSchema,
  EventsSchema,
  FeatureEventsSchema,
} from './events.schemas.js';
import { can } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';

const tags = ['Events'];
const route = routesTagged(tags);
const RECENT_EVENTS = 100;

/**
 * A JSON object whose `events` array is written batch by batch as the database yields it, so a listing of a
 * million events leaves at once and holds one batch in memory.
 */
async function* jsonWithEvents(head: Record<string, unknown>, batches: AsyncIterable<EventView[]>): AsyncGenerator<string> {
  yield `${JSON.stringify(head).slice(0, -1)},"events":[`;
  let first = true;
  for await (const batch of batches) {
    const body = batch.map((event) => JSON.stringify(event)).join(',');
    yield first ? body : `,${body}`;
    first = false;
  }
  yield ']}';
}

/** The typed reply only accepts the response shape; a stream of that shape's JSON text is sent untyped. */
function sendJsonStream(reply: FastifyReply, chunks: AsyncGenerator<string>) {
  return reply.type('application/json; charset=utf-8').send(Readable.from(chunks));
}

/** Events are parsed, described and written a few dozen at a time, so what they allocate dies young. */
const EVENTS_PER_CHUNK = 50;

function* chunksOf<T>(items: T[]): Generator<T[]> {
  for (let start = 0; start < items.length; start += EVENTS_PER_CHUNK) yield items.slice(start, start + EVENTS_PER_CHUNK);
}

async function* ndjsonLines(batches: AsyncIterable<ExportedEventRow[]>): AsyncGenerator<string> {
  for await (const batch of batches) {
    for (const chunk of chunksOf(batch)) yield chunk.map((row) => `${JSON.stringify(exportedEventView(row))}\n`).join('');
  }
}

const CSV_COLUMNS = [
  'id',
  'createdAt',
  'type',
  'createdBy',
  'createdByUserId',
  'project',
  'environment',
  'featureName',
  'changeRequestId',
  'label',
  'summary',
  'tags',
  'preData',
  'data',
] as const;

/** One row per event; objects as JSON text. Cells that a spreadsheet would run as a formula are escaped. */
async function* csvLines(batches: AsyncIterable<ExportedEventRow[]>): AsyncGenerator<string> {
  yield stringify([CSV_COLUMNS]);
  for await (const batch of batches) {
    for (const chunk of chunksOf(batch)) {
      const rows = chunk.map(exportedEventView).map((event) =>
        CSV_COLUMNS.map((column) => {
          const value = event[column];
          if (value === undefined || value === null) return '';
          return typeof value === 'object' ? JSON.stringify(value) : value;
        }),
      );
      yield stringify(rows, { escape_formulas: true });
    }
  }
}

export const eventRoutes: RouteModule = async (app, { deps }) => {
  // Registered before `/api/admin/events/:featureName`; a flag named "export" is read through the search instead.
  app.get(
    '/api/admin/events/export',
    route(can('ADMIN'), {
      querystring: EventExportQuerySchema,
      response: {
        200: {
          description: 'Every matching event, oldest first, streamed',
          content: { 'application/x-ndjson': { schema: Type.String() }, 'text/csv': { schema: Type.String() } },
        },
      },
    }),
    async (request, reply) => {
      const { format = 'ndjson', ...filters } = request.query;
      const bounds = readBoundsOf(deps, reply);
      const batches = exportEvents(deps.db, filters, (work) => boundedRead(deps.db, bounds, work));
      const day = deps.clock.now().toISOString().slice(0, 10);
      reply
        .header('content-disposition', `attachment; filename="vexil-events-${day}.${format}"`)
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
      // The typed reply only accepts the declared string; the same text is sent as a stream.
      // One batch buffered ahead of the socket at most: memory stays flat whatever the log holds.
      const body = Readable.from(format === 'csv' ? csvLines(batches) : ndjsonLines(batches), { highWaterMark: 1 });
      return (reply as FastifyReply).send(body);
    },
  );

  app.get(
    '/api/admin/events',
    route(can('ADMIN'), {
      querystring: Type.Object({ project: Type.Optional(Type.String({ description: 'All events of this project' })) }),
      ok: EventsSchema,
    }),
    async (request, reply) => {
      const { project } = request.query;
      if (project === undefined) {
        const [events, totalEvents] = await Promise.all([recentEvents(deps.db, RECENT_EVENTS), countEvents(deps.db)]);
        return { version: 1 as const, events, totalEvents };
      }
      const totalEvents = await countEvents(deps.db, project);
      return sendJsonStream(reply, jsonWithEvents({ version: 1, totalEvents }, streamEvents(deps.db, { project })));
    },
  );

  app.get(
    '/api/admin/events/:featureName',
    route(can('READ'), {
      params: Type.Object({ featureName: Type.String({ minLength: 1, maxLength: 100 }) }),
      ok: FeatureEventsSchema,
    }),
    async (request, reply) => {
      const { featureName } = request.params;
      const totalEvents = await countFeatureEvents(deps.db, featureName);
      return sendJsonStream(
        reply,
        jsonWithEvents({ version: 1, toggleName: featureName, totalEvents }, streamEvents(deps.db, { featureName })),
      );
    },
  );

  // Anyone signed in searches the events of flags and projects they can see, as in Unleash; the rest of the log
  // (people's emails, sign-ins, every token's story) is the Admins'.
  app.get(
    '/api/admin/search/events',
    route(can('READ'), { querystring: EventSearchQuerySchema, ok: EventSearchResponseSchema }),
    async (request, reply) => boundedRead(deps.db, readBoundsOf(deps, reply), (db) => searchEvents(db, actorOf(request), request.query)),
  );

  app.post(
    '/api/admin/events/search',
    route(can('ADMIN'), { deprecated: true, body: DeprecatedSearchEventsSchema, ok: EventsSchema }),
    async (request, reply) => {
      const { events, totalEvents } = await boundedRead(deps.db, readBoundsOf(deps, reply), (db) =>
        deprecatedEventSearch(db, request.body ?? {}),
      );
      return reply
        .header('Deprecation', 'true')
        .header('Link', '</api/admin/search/events>; rel="successor-version"')
        .send({ version: 1 as const, events, totalEvents });
    },
  );

  app.get('/api/admin/event-creators', route(can('READ'), { ok: EventCreatorsSchema }), async () => eventCreators(deps.db));
};
