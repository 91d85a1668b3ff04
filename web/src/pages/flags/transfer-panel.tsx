import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { actions, type ImportDocument, queries } from '../../api/queries';
import { ErrorMessage, useAction } from '../../components/ui';

/** The largest export file the page reads; the API takes up to 16 MiB. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

function useEnvironmentsAndProjects() {
  const environments = useQuery(queries.environments());
  const projects = useQuery(queries.projects());
  return {
    environments: (environments.data?.environments ?? []).map((e) => e.name),
    projects: projects.data?.projects ?? [],
  };
}

/** Saves a JSON document as a file through the browser's download. */
function download(name: string, document: unknown) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(document, null, 2)], { type: 'application/json' }));
  const link = Object.assign(window.document.createElement('a'), { href: url, download: name });
  link.click();
  URL.revokeObjectURL(url);
}

/** Export one environment of a project, or of the flags ticked in the list, in Unleash's file format. */
export function ExportPanel({ selected }: { selected: string[] }) {
  const { environments, projects } = useEnvironmentsAndProjects();
  const [environment, setEnvironment] = useState('');
  const [scope, setScope] = useState<'selected' | 'project'>(selected.length > 0 ? 'selected' : 'project');
  const [project, setProject] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const chosenEnvironment = environment || environments[0] || '';
  const chosenProject = project || projects[0]?.id || '';
  const exportFlags = useAction(actions.exportFlags, (result) => {
    const name = `vexil-${scope === 'project' ? chosenProject : 'flags'}-${chosenEnvironment}.json`;
    download(name, result);
    setDone(`Exported ${result.features.length} flag${result.features.length === 1 ? '' : 's'} to ${name}.`);
  });
  return (
    <section className="card stack" aria-labelledby="export-title">
      <h2 id="export-title">Export</h2>
      <p className="muted small">A file in Unleash’s export format: it imports here and into Unleash.</p>
      <div className="row">
        <label>
          Environment{' '}
          <select value={chosenEnvironment} onChange={(event) => setEnvironment(event.target.value)}>
            {environments.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label className="check">
          <input type="radio" name="export-scope" checked={scope === 'project'} onChange={() => setScope('project')} /> Project
        </label>
        <select
          aria-label="Project to export"
          value={chosenProject}
          disabled={scope !== 'project'}
          onChange={(event) => setProject(event.target.value)}
        >
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
        <label className="check">
          <input
            type="radio"
            name="export-scope"
            checked={scope === 'selected'}
            disabled={selected.length === 0}
            onChange={() => setScope('selected')}
          />{' '}
          The {selected.length} flag{selected.length === 1 ? '' : 's'} ticked below
        </label>
        <button
          type="button"
          className="primary"
          disabled={exportFlags.isPending || !chosenEnvironment || (scope === 'selected' && selected.length === 0)}
          onClick={() => {
            setDone(null);
            exportFlags.mutate(
              scope === 'project'
                ? { environment: chosenEnvironment, project: chosenProject }
                : { environment: chosenEnvironment, features: selected },
            );
          }}
        >
          Download
        </button>
      </div>
      {done && (
        <p className="success" role="status">
          {done}
        </p>
      )}
      <ErrorMessage error={exportFlags.error} />
    </section>
  );
}

interface Validation {
  errors: Array<{ message: string; affectedItems: string[] }>;
  warnings: Array<{ message: string; affectedItems: string[] }>;
  permissions: Array<{ message: string; affectedItems: string[] }>;
}

function Findings({ title, items, className }: { title: string; items: Validation['errors']; className: string }) {
  if (items.length === 0) return null;
  return (
    <div className={className}>
      <strong>{title}</strong>
      <ul>
        {items.map((item) => (
          <li key={item.message}>
            {item.message} {item.affectedItems.join(', ')}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Import an export file: read it, see what the server finds and what would change, then confirm. */
export function ImportPanel() {
  const { environments, projects } = useEnvironmentsAndProjects();
  const [project, setProject] = useState('');
  const [environment, setEnvironment] = useState('');
  const [data, setData] = useState<ImportDocument['data'] | null>(null);
  const [readError, setReadError] = useState<string | null>(null);
  const [validation, setValidation] = useState<Validation | null>(null);
  const validate = useAction(actions.validateImport, setValidation);
  const preview = useAction(actions.importFlags);
  const apply = useAction(actions.importFlags);
  const chosenProject = project || projects[0]?.id || '';
  const chosenEnvironment = environment || environments[0] || '';

  const reset = () => {
    setValidation(null);
    preview.reset();
    apply.reset();
  };
  const check = (document: ImportDocument) => {
    reset();
    validate.mutate(document);
    preview.mutate({ document, dryRun: true });
  };
  const documentFor = (fileData: ImportDocument['data']) => ({ project: chosenProject, environment: chosenEnvironment, data: fileData });

  const readFile = async (file: File | undefined) => {
    reset();
    setData(null);
    setReadError(null);
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) return setReadError(`${file.name} is larger than 16 MiB; export fewer flags at a time.`);
    try {
      const parsed = JSON.parse(await file.text()) as ImportDocument['data'];
      setData(parsed);
      check(documentFor(parsed));
    } catch {
      setReadError(`${file.name} is not JSON: choose a file exported from Vexil or Unleash.`);
    }
  };

  const blocked = !validation || validation.errors.length > 0 || validation.permissions.length > 0 || !preview.data;
  const changes = preview.data?.changes ?? [];
  return (
    <section className="card stack" aria-labelledby="import-title">
      <h2 id="import-title">Import</h2>
      <p className="muted small">
        An export file of Vexil or Unleash, into one project and environment. Each flag becomes what the file says there; a protected
        environment gets a change request instead.
      </p>
      <div className="row">
        <label>
          Into project{' '}
          <select
            aria-label="Project to import into"
            value={chosenProject}
            onChange={(event) => {
              setProject(event.target.value);
              if (data) check({ ...documentFor(data), project: event.target.value });
            }}
          >
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          environment{' '}
          <select
            aria-label="Environment to import into"
            value={chosenEnvironment}
            onChange={(event) => {
              setEnvironment(event.target.value);
              if (data) check({ ...documentFor(data), environment: event.target.value });
            }}
          >
            {environments.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          <span className="sr-only">Export file</span>
          <input
            type="file"
            accept="application/json,.json"
            aria-label="Export file"
            onChange={(event) => readFile(event.target.files?.[0])}
          />
        </label>
      </div>
      {readError && (
        <p className="error" role="alert">
          {readError}
        </p>
      )}
      <ErrorMessage error={validate.error ?? preview.error} />
      {validation && (
        <div className="stack" data-testid="import-validation">
          <Findings title="Cannot be imported" items={validation.errors} className="error box" />
          <Findings title="Your role cannot import this" items={validation.permissions} className="error box" />
          <Findings title="Warnings" items={validation.warnings} className="notice" />
        </div>
      )}
      {preview.data && !apply.data && validation?.errors.length === 0 && (
        <div data-testid="import-preview">
          <strong>
            {changes.length === 0
              ? 'Nothing would change: the flags already match the file.'
              : `What the import changes (${changes.length}):`}
          </strong>
          <ul className="small">
            {changes.map((change, index) => (
              <li key={index}>
                <span className={`badge ${change.change === 'created' ? 'on' : ''}`}>{change.change}</span> {change.target}
                {change.detail ? `: ${change.detail}` : ''}
              </li>
            ))}
          </ul>
        </div>
      )}
      {!apply.data && (
        <div className="row">
          <button
            type="button"
            className="primary"
            disabled={blocked || changes.length === 0 || apply.isPending}
            onClick={() => data && apply.mutate({ document: documentFor(data), dryRun: false })}
          >
            Import
          </button>
        </div>
      )}
      <ErrorMessage error={apply.error} />
      {apply.data && (
        <div className="success" role="status">
          Imported: {apply.data.changes.length} change{apply.data.changes.length === 1 ? '' : 's'}.
          {apply.data.changeRequests.map((cr) => (
            <div key={cr.id}>
              The changes to {cr.environment}, which requires review, are in{' '}
              <Link to={`/projects/${encodeURIComponent(cr.project)}/change-requests/${cr.id}`}>change request #{cr.id}</Link>.
            </div>
          ))}
        </div>
      )}
    </section>
  );
}
