import { useState } from 'react';

/** Leaves of a JSON value by path (`strategies[0].parameters.rollout`), each written as JSON. */
function leaves(value: unknown, path = '', into = new Map<string, string>()): Map<string, string> {
  if (Array.isArray(value) && value.length > 0) {
    for (const [index, item] of value.entries()) leaves(item, `${path}[${index}]`, into);
  } else if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) {
    for (const [key, inner] of Object.entries(value)) leaves(inner, path ? `${path}.${key}` : key, into);
  } else if (value !== undefined) into.set(path || '(value)', JSON.stringify(value));
  return into;
}

type Row = { path: string; before?: string; after?: string; kind: 'same' | 'changed' | 'added' | 'removed' };

export function diffRows(before: unknown, after: unknown): Row[] {
  const old = before == null ? new Map<string, string>() : leaves(before);
  const now = after == null ? new Map<string, string>() : leaves(after);
  const rows: Row[] = [];
  for (const [path, value] of now) {
    const previous = old.get(path);
    rows.push({ path, before: previous, after: value, kind: previous === undefined ? 'added' : previous === value ? 'same' : 'changed' });
  }
  for (const [path, value] of old) if (!now.has(path)) rows.push({ path, before: value, kind: 'removed' });
  return rows;
}

/** Before and after side by side, one row per field; unchanged fields are folded away until asked for. */
export function SideBySideDiff({
  before,
  after,
  beforeLabel = 'Before (preData)',
  afterLabel = 'After (data)',
}: {
  before: unknown;
  after: unknown;
  beforeLabel?: string;
  afterLabel?: string;
}) {
  const [showAll, setShowAll] = useState(false);
  const rows = diffRows(before, after);
  const changed = rows.filter((row) => row.kind !== 'same');
  const shown = showAll ? rows : changed;
  if (rows.length === 0) return <p className="muted small">No data.</p>;
  return (
    <div>
      <table className="diff" aria-label="Changes">
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">{beforeLabel}</th>
            <th scope="col">{afterLabel}</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((row) => (
            <tr key={row.path} className={row.kind}>
              <td className="path">{row.path}</td>
              <td className="before">{row.before ?? ''}</td>
              <td className="after">{row.after ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length > changed.length && (
        <button type="button" className="link small" onClick={() => setShowAll(!showAll)}>
          {showAll ? 'Hide unchanged fields' : `Show ${rows.length - changed.length} unchanged fields`}
        </button>
      )}
    </div>
  );
}
