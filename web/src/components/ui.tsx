import { useMutation, useQueryClient } from '@tanstack/react-query';
import { cloneElement, useId, useState, type CSSProperties, type FormEvent, type ReactElement, type ReactNode } from 'react';
import { ApiError } from '../api/errors';
import type { Action } from '../api/queries';

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  return new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** An error as the page shows it: the API's message, and each detail when there are several. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const details = error instanceof ApiError ? error.details.filter((detail) => detail.message !== message) : [];
  return (
    <div className="error box" role="alert">
      {message}
      {details.length > 0 && (
        <ul>
          {details.map((detail, index) => (
            <li key={index}>{detail.message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * A labelled control with the API's complaint about that field shown under it. The label points at the control
 * by id, so its accessible name is the label alone (a wrapping label would add a select's option texts).
 */
export function Field({
  label,
  error,
  field,
  children,
  hint,
}: {
  label: string;
  error?: unknown;
  field?: string;
  children: ReactElement<{ id?: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }>;
  hint?: ReactNode;
}) {
  const id = useId();
  const message = error instanceof ApiError && field ? error.about(field) : undefined;
  const described = [hint ? `${id}-hint` : '', message ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, {
        id,
        ...(described ? { 'aria-describedby': described } : {}),
        ...(message ? { 'aria-invalid': true } : {}),
      })}
      {hint && (
        <span id={`${id}-hint`} className="muted small">
          {hint}
        </span>
      )}
      {message && (
        <span id={`${id}-error`} className="field-error">
          {message}
        </span>
      )}
    </div>
  );
}

/** A name that appears in addresses (a flag's, an experiment's, a metric's), with the API's complaint about it. */
export function UrlNameField({ label = 'Name', error }: { label?: string; error: unknown }) {
  return (
    <Field label={label} error={error} field="name">
      <input name="name" required pattern="[A-Za-z0-9_.~\-]+" title="Letters, digits and _ . ~ -" />
    </Field>
  );
}

/**
 * A form's submit handler: the browser's own submission (a page load) is stopped and the handler gets the form's
 * fields, and the form itself to reset once the API has answered.
 */
export function onFormSubmit(handle: (form: FormData, element: HTMLFormElement) => unknown) {
  return (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void handle(new FormData(event.currentTarget), event.currentTarget);
  };
}

/** A form's foot: what the API refused, what went well, and the submit button, held while the request runs. */
export function FormSubmit({
  action,
  label,
  primary = false,
  success,
}: {
  action: { error: unknown; isPending: boolean };
  label: string;
  primary?: boolean;
  success?: ReactNode;
}) {
  return (
    <>
      <ErrorMessage error={action.error} />
      {success && <p className="success">{success}</p>}
      <div>
        <button className={primary ? 'primary' : undefined} type="submit" disabled={action.isPending}>
          {label}
        </button>
      </div>
    </>
  );
}

/** A table of rows with one header per column; an empty column name is the row's actions (named for screen readers). */
export function Table({ label, columns, children }: { label: string; columns: string[]; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th key={index} scope="col">
                {column || <span className="sr-only">Actions</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** A query's state as a page shows it: loading, its error, or the content. */
export function Loaded<T>({
  query,
  what,
  children,
}: {
  query: { data?: T; error: unknown; isPending: boolean };
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading what={what} />;
  if (query.error) return <ErrorMessage error={query.error} />;
  return <>{children(query.data as T)}</>;
}

/** A list once loaded: `empty` said in words when it has nothing, else what `children` makes of its items. */
export function LoadedList<T, Item>({
  query,
  what,
  items,
  empty,
  children,
}: {
  query: { data?: T; error: unknown; isPending: boolean };
  what: string;
  items: (data: T) => Item[];
  empty: string;
  children: (items: Item[]) => ReactNode;
}) {
  return (
    <Loaded query={query} what={what}>
      {(data) => {
        const list = items(data);
        return list.length === 0 ? <p className="muted">{empty}</p> : children(list);
      }}
    </Loaded>
  );
}

/** Page controls. Without a `total` (lists the API does not count), Next is offered while a page comes back full. */
export function Pager({
  offset,
  limit,
  total,
  shown,
  onChange,
}: {
  offset: number;
  limit: number;
  total?: number;
  shown?: number;
  onChange: (offset: number) => void;
}) {
  const last = offset + Math.min(limit, total === undefined ? (shown ?? 0) : total - offset);
  const more = total === undefined ? shown === limit : last < total;
  return (
    <nav className="pager" aria-label="Pages">
      <span className="muted small">{last === offset ? 'None' : `${offset + 1}–${last}${total === undefined ? '' : ` of ${total}`}`}</span>
      <button type="button" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
        Previous
      </button>
      <button type="button" disabled={!more} onClick={() => onChange(offset + limit)}>
        Next
      </button>
    </nav>
  );
}

/**
 * A change the page makes through the API: while it runs its button is disabled, its error is kept to show next
 * to it, and the queries the action names as affected are read again when it is done.
 */
export function useAction<Input, Output>(action: Action<Input, Output>, onDone?: (output: Output) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: action.run,
    onSuccess: async (output, input) => {
      await Promise.all(action.invalidates(input).map((queryKey) => queryClient.invalidateQueries({ queryKey })));
      onDone?.(output);
    },
  });
}

/** A button that asks before it does something that cannot be undone. */
export function ConfirmButton({
  question,
  onConfirm,
  children,
  disabled,
}: {
  question: string;
  onConfirm: () => void;
  children: ReactNode;
  disabled?: boolean;
}) {
  return (
    <button type="button" className="danger" disabled={disabled} onClick={() => window.confirm(question) && onConfirm()}>
      {children}
    </button>
  );
}

/** A table row's last cell: its Delete button, asked to confirm, for those who may delete (empty for others). */
export function DeleteCell({ shown, ...confirm }: { shown: boolean; question: string; onConfirm: () => void; disabled?: boolean }) {
  return <td>{shown && <ConfirmButton {...confirm}>Delete</ConfirmButton>}</td>;
}

export function Switch({
  checked,
  label,
  onChange,
  disabled,
}: {
  checked: boolean;
  label: string;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
}) {
  return (
    <label className="switch">
      <input
        type="checkbox"
        role="switch"
        checked={checked}
        aria-checked={checked}
        aria-label={label}
        disabled={disabled}
        onChange={(event) => onChange(event.target.checked)}
      />
      <span>{checked ? 'On' : 'Off'}</span>
    </label>
  );
}

/** A ticked box with its words beside it, kept by the page's state (a form's own boxes are plain inputs). */
export function Check({
  checked,
  onChange,
  disabled,
  className = 'check',
  style,
  children,
}: {
  checked: boolean;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
  className?: string;
  style?: CSSProperties;
  children: ReactNode;
}) {
  return (
    <label className={className} style={style}>
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(event) => onChange(event.target.checked)} /> {children}
    </label>
  );
}

/** A secret shown once, right after it was created, with a button to copy it. */
export function OneTimeSecret({ label, secret }: { label: string; secret: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="success stack" role="status">
      <strong>{label}</strong>
      <span>It is shown only this once: copy it now.</span>
      <div className="row">
        <code className="secret" data-testid="secret">
          {secret}
        </code>
        <button
          type="button"
          onClick={() =>
            navigator.clipboard.writeText(secret).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </div>
  );
}

/** A new password, with the rules the server holds it to. */
export function NewPasswordField({ label, error }: { label: string; error: unknown }) {
  return (
    <Field label={label} error={error} field="password" hint="10 to 128 characters with lower and upper case, a digit and a symbol.">
      <input name="password" type="password" autoComplete="new-password" required />
    </Field>
  );
}
