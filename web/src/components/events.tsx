import { Link } from 'react-router';
import type { Schemas } from '../api/queries';
import { SideBySideDiff } from './diff';
import { formatDate } from './ui';

type Event = Schemas['eventSchema'];

/**
 * Events newest first, each with its label, summary and links; "What changed" opens preData → data side by
 * side. Links stay outside the disclosure's summary, where a link inside a button-like control would not work
 * for keyboards and screen readers.
 */
export function EventList({ events }: { events: Event[] }) {
  if (events.length === 0) return <p className="muted">No events.</p>;
  return (
    <div className="card" data-testid="event-list">
      {events.map((event) => (
        <article key={event.id} className="event" data-testid="event">
          <div>
            <div className="spread">
              <strong className="event-label">{event.label ?? event.type}</strong>
              <span className="muted small">
                #{event.id} · {formatDate(event.createdAt)} · {event.createdBy}
                {event.via && <span data-testid="event-via"> via {event.via}</span>}
              </span>
            </div>
            <div className="row small">
              <code>{event.type}</code>
              {event.project && <span className="badge">project {event.project}</span>}
              {event.featureName && (
                <Link
                  to={`/projects/${encodeURIComponent(event.project ?? 'default')}/flags/${encodeURIComponent(event.featureName)}`}
                  className="badge"
                >
                  flag {event.featureName}
                </Link>
              )}
              {event.environment && <span className="badge">{event.environment}</span>}
              {event.changeRequestId && <span className="badge">change request #{event.changeRequestId}</span>}
            </div>
            {event.summary && <p className="small summary">{stripMarkdown(event.summary)}</p>}
          </div>
          <details>
            <summary className="small">What changed</summary>
            <SideBySideDiff before={event.preData} after={event.data} />
          </details>
        </article>
      ))}
    </div>
  );
}

/** Summaries are markdown with `**bold**` names; shown as text they read fine without the markers. */
function stripMarkdown(text: string): string {
  return text.replace(/\*\*(.*?)\*\*/g, '$1').replace(/\[(.*?)\]\([^)]*\)/g, '$1');
}
