import { Fragment, useState, type ReactNode } from 'react';
import type { Action } from '../api/queries';
import { ConfirmButton, ErrorMessage, Field, Loaded, onFormSubmit, Table, useAction } from './ui';

/**
 * A form of an admin page: its fields, the API's complaint, and its submit button (and Cancel while editing).
 * `onSubmit` gets the form's data and the form itself, to reset it once saved.
 */
export function EditorForm({
  label,
  submitLabel,
  mutation,
  onSubmit,
  onCancel,
  footer,
  className = 'card stack',
  children,
}: {
  label: string;
  submitLabel: string;
  mutation: { error: unknown; isPending: boolean };
  onSubmit: (form: FormData, element: HTMLFormElement) => void;
  onCancel?: () => void;
  /** Shown under the error: what the page offers once a save was refused. */
  footer?: ReactNode;
  className?: string;
  children: ReactNode;
}) {
  const submit = onFormSubmit(onSubmit);
  const buttons = (
    <div className="row">
      <button className="primary" type="submit" disabled={mutation.isPending}>
        {submitLabel}
      </button>
      {onCancel && (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      )}
    </div>
  );
  // A one-line form (`row`) has its buttons beside the fields and the complaint after them.
  const oneLine = className.split(' ').includes('row');
  return (
    <form className={className} onSubmit={submit} aria-label={label}>
      {children}
      {oneLine && buttons}
      <ErrorMessage error={mutation.error} />
      {footer}
      {!oneLine && buttons}
    </form>
  );
}

/**
 * The form of one item of an admin list, named as the list names it: "New <noun>" with "Create <noun>", or, while
 * `editing` (the item's name), "Edit <noun> <name>" with "Save <noun>" and Cancel, which ends as saving does.
 */
export function ItemForm({
  noun,
  editing,
  onDone,
  ...form
}: { noun: string; editing: string | undefined; onDone: () => void } & Omit<
  Parameters<typeof EditorForm>[0],
  'label' | 'submitLabel' | 'onCancel'
>) {
  return editing === undefined ? (
    <EditorForm label={`New ${noun}`} submitLabel={`Create ${noun}`} {...form} />
  ) : (
    <EditorForm label={`Edit ${noun} ${editing}`} submitLabel={`Save ${noun}`} onCancel={onDone} {...form} />
  );
}

/** The text of a form field, trimmed. */
export const formText = (form: FormData, name: string) => String(form.get(name) ?? '').trim();

/**
 * Deleting an item of an admin list: the action, which takes the item's key unless `input` says otherwise, and the
 * question asked first: "Delete the <noun> <name>?" and what follows from it.
 */
export interface Removal<Item, Input> {
  action: Action<Input, unknown>;
  input?: (item: Item) => Input;
  /** What else happens, after the question: "Its tokens stop working at once." */
  consequence?: string;
  /** The button's text: Delete unless the item is kept another way (Archive). */
  label?: string;
}

const idOrName = (item: unknown): string | number => {
  const { id, name } = item as { id?: string | number; name?: string };
  return id ?? name ?? '';
};

const nameOrKey = (item: unknown): string => {
  const { name } = item as { name?: string };
  return name ?? String(idOrName(item));
};

/**
 * An admin page's list: a table with a row per item, Edit (the item's form in place of its row) and Delete
 * (asked first) on each, and the form for a new one under it, fresh again after each creation.
 */
export function AdminList<Data, Item, RemoveInput>({
  title,
  intro,
  query,
  what = title.replace(/^[A-Z](?=[a-z])/, (first) => first.toLowerCase()),
  items,
  keyOf = idOrName,
  nameOf = nameOrKey,
  columns,
  cells,
  empty,
  edit,
  remove,
  actions,
  changeable = () => true,
  rowClass,
  below,
  notice,
  noun,
  create,
}: {
  title: string;
  intro?: ReactNode;
  query: { data?: Data; error: unknown; isPending: boolean };
  /** What the list holds, for "Loading …": the title, as words in a sentence. */
  what?: string;
  items: (data: Data) => Item[];
  /** Tells items apart: their id, or else their name. */
  keyOf?: (item: Item) => string | number;
  /** What people call an item, in questions: its name. */
  nameOf?: (item: Item) => string;
  /** The item's columns; a last one for the actions is added. */
  columns: string[];
  cells: (item: Item) => ReactNode;
  empty?: string;
  edit?: (item: Item, done: () => void) => ReactNode;
  remove?: Removal<Item, RemoveInput>;
  /** More buttons of an item's row, before Edit and Delete. */
  actions?: (item: Item) => ReactNode;
  /** Whether the item may be edited and deleted (built-in ones may not). */
  changeable?: (item: Item) => boolean;
  rowClass?: (item: Item) => string | undefined;
  /** What the page shows under an item's row while it is open (its tokens, a password form), or null. */
  below?: (item: Item) => ReactNode;
  /** What the last change did, above the list. */
  notice?: string | null;
  /** What one item is called: the new-item form is under "New <noun>". */
  noun: string;
  create?: (done: () => void) => ReactNode;
}) {
  const [editing, setEditing] = useState<string | number | null>(null);
  const [formKey, setFormKey] = useState(0);
  const hasActions = Boolean(edit || remove || actions);
  const width = columns.length + (hasActions ? 1 : 0);
  return (
    <div>
      <h1>{title}</h1>
      {intro && <p className="muted">{intro}</p>}
      {notice && <p className="success">{notice}</p>}
      <Loaded query={query} what={what}>
        {(data) => {
          const listed = items(data);
          return (
            <Table label={title} columns={hasActions ? [...columns, ''] : columns}>
              {listed.length === 0 && empty && (
                <tr>
                  <td colSpan={width} className="muted">
                    {empty}
                  </td>
                </tr>
              )}
              {listed.map((item) => (
                <Fragment key={keyOf(item)}>
                  {edit && editing === keyOf(item) ? (
                    <tr>
                      <td colSpan={width}>{edit(item, () => setEditing(null))}</td>
                    </tr>
                  ) : (
                    <tr className={rowClass?.(item)}>
                      {cells(item)}
                      {hasActions && (
                        <td>
                          <div className="row">
                            {actions?.(item)}
                            {edit && changeable(item) && (
                              <button type="button" onClick={() => setEditing(keyOf(item))}>
                                Edit
                              </button>
                            )}
                            {remove && changeable(item) && (
                              <RemoveButton
                                question={`${remove.label ?? 'Delete'} the ${noun} ${nameOf(item)}?${remove.consequence ? ` ${remove.consequence}` : ''}`}
                                input={remove.input?.(item) ?? (keyOf(item) as RemoveInput)}
                                removal={remove}
                              />
                            )}
                          </div>
                        </td>
                      )}
                    </tr>
                  )}
                  {below?.(item) && (
                    <tr>
                      <td colSpan={width}>{below(item)}</td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </Table>
          );
        }}
      </Loaded>
      {/* After the list has loaded: forms take their choices (roles, environments) from it, and a default chosen
          before those options exist would not hold. */}
      {create && query.data !== undefined && (
        <>
          <h2>New {noun}</h2>
          <div key={formKey}>{create(() => setFormKey((key) => key + 1))}</div>
        </>
      )}
    </div>
  );
}

function RemoveButton<Item, Input>({ question, input, removal }: { question: string; input: Input; removal: Removal<Item, Input> }) {
  const remove = useAction(removal.action);
  return (
    <>
      <ConfirmButton question={question} onConfirm={() => remove.mutate(input)} disabled={remove.isPending}>
        {removal.label ?? 'Delete'}
      </ConfirmButton>
      <ErrorMessage error={remove.error} />
    </>
  );
}

/** The name and description most things have; a stored item's values are filled in. */
export function NameAndDescription({ error, item }: { error: unknown; item?: { name?: string; description?: string | null } }) {
  return (
    <>
      <Field label="Name" error={error} field="name">
        <input name="name" required defaultValue={item?.name} />
      </Field>
      <Field label="Description" error={error} field="description">
        <input name="description" defaultValue={item?.description ?? ''} />
      </Field>
    </>
  );
}

/** An item's first cell: its name, strong, with its description under it when it has one. */
export function NameCell({ name, description, children }: { name: ReactNode; description?: string | null; children?: ReactNode }) {
  return (
    <td>
      <strong>{name}</strong>
      {children}
      {description && <div className="muted small">{description}</div>}
    </td>
  );
}

/** The root roles to choose from, by id or by name as the API takes them. */
export function RootRoleOptions({ roles, by }: { roles: Array<{ id: number; name: string }>; by: 'id' | 'name' }) {
  return roles.map((role) => (
    <option key={role.id} value={role[by]}>
      {role.name}
    </option>
  ));
}
