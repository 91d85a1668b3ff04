import type { Schemas } from '../api/queries';
import { ConfirmButton, formatDate, Table } from './ui';

type Session = Schemas['sessionSchema'];

const BROWSERS: Array<[RegExp, string]> = [
  [/Edg\//, 'Edge'],
  [/OPR\//, 'Opera'],
  [/Firefox\//, 'Firefox'],
  [/Chrome\//, 'Chrome'],
  [/Safari\//, 'Safari'],
];
const SYSTEMS: Array<[RegExp, string]> = [
  [/iPhone|iPad/, 'iOS'],
  [/Android/, 'Android'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** "Firefox on Linux" from what a browser calls itself; a script's own name as it gave it. */
export function describeAgent(userAgent: string | null): string {
  if (!userAgent) return 'Unknown';
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (!browser) return userAgent.split(/[\s/]/)[0] || 'Unknown';
  return system ? `${browser} on ${system}` : browser;
}

/**
 * Open sessions as a table: where and with what each was opened, when it was last used, and a button to end it.
 * `current` rows (the session of this browser) say so instead.
 */
export function SessionTable({
  label,
  sessions,
  onEnd,
  ending,
}: {
  label: string;
  sessions: Session[];
  onEnd: (session: Session) => void;
  ending: boolean;
}) {
  if (sessions.length === 0) return <p className="muted">No open sessions.</p>;
  return (
    <Table label={label} columns={['Browser', 'Address', 'Signed in', 'Last used', '']}>
      {sessions.map((session) => (
        <tr key={session.id}>
          <td title={session.userAgent ?? undefined}>
            {describeAgent(session.userAgent)}
            {session.current && (
              <>
                {' '}
                <span className="badge on">This browser</span>
              </>
            )}
          </td>
          <td className="small">{session.address ?? '—'}</td>
          <td className="small">{formatDate(session.createdAt)}</td>
          <td className="small">{formatDate(session.seenAt)}</td>
          <td>
            {!session.current && (
              <ConfirmButton
                question={`End the session of ${describeAgent(session.userAgent)}?`}
                onConfirm={() => onEnd(session)}
                disabled={ending}
              >
                End
              </ConfirmButton>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}
