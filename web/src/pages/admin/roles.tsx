import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, NameCell, formText, ItemForm, NameAndDescription } from '../../components/admin';
import { Field, Loaded, Table, useAction } from '../../components/ui';

type Role = Schemas['roleSchema'];
type RoleWithPermissions = Schemas['roleWithPermissionsSchema'];
type Catalogue = Schemas['permissionsSchema']['permissions'];
type CustomType = 'root-custom' | 'custom';

const TYPE_NAMES: Record<string, string> = {
  root: 'Root (built in)',
  project: 'Project (built in)',
  'root-custom': 'Root',
  custom: 'Project',
};

const isCustom = (role: Role) => role.type === 'root-custom' || role.type === 'custom';

/** A checkbox's value: the permission, and after `@` the one environment it is limited to. */
const grantValue = (name: string, environment?: string) => (environment ? `${name}@${environment}` : name);

function grantsOf(form: FormData) {
  return form.getAll('permission').map((value) => {
    const [name, environment] = String(value).split('@');
    return environment ? { name: name!, environment } : { name: name! };
  });
}

/** Checkboxes of permissions held everywhere the role applies. */
function PermissionChecks({ title, permissions, held }: { title: string; permissions: Catalogue['root']; held: Set<string> }) {
  return (
    <fieldset className="stack">
      <legend>{title}</legend>
      <div className="grid2">
        {permissions.map((permission) => (
          <label key={permission.name} className="check">
            <input type="checkbox" name="permission" value={permission.name} defaultChecked={held.has(permission.name)} />
            {permission.displayName}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** A project role's flag permissions: in every environment, or only in the environments ticked. */
function EnvironmentMatrix({ catalogue, held }: { catalogue: Catalogue; held: Set<string> }) {
  const environments = catalogue.environments.map((environment) => environment.name);
  const permissions = catalogue.environments[0]?.permissions ?? [];
  return (
    <fieldset className="stack">
      <legend>Changing flags, by environment</legend>
      <Table label="Permissions by environment" columns={['Permission', 'All environments', ...environments]}>
        {permissions.map((permission) => (
          <tr key={permission.name}>
            <td>{permission.displayName}</td>
            {[undefined, ...environments].map((environment) => (
              <td key={environment ?? '*'}>
                <input
                  type="checkbox"
                  name="permission"
                  aria-label={`${permission.displayName} in ${environment ?? 'all environments'}`}
                  value={grantValue(permission.name, environment)}
                  defaultChecked={held.has(grantValue(permission.name, environment))}
                />
              </td>
            ))}
          </tr>
        ))}
      </Table>
    </fieldset>
  );
}

function RoleForm({ role, onDone }: { role?: RoleWithPermissions; onDone: () => void }) {
  const catalogue = useQuery(queries.permissions());
  const create = useAction(actions.createRole, onDone);
  const update = useAction(actions.updateRole, onDone);
  const mutation = role ? update : create;
  const [type, setType] = useState<CustomType>((role?.type as CustomType | undefined) ?? 'custom');
  const held = new Set((role?.permissions ?? []).map((permission) => grantValue(permission.name, permission.environment)));
  const submit = (form: FormData) => {
    const body = { name: formText(form, 'name'), description: formText(form, 'description') || null, type, permissions: grantsOf(form) };
    if (role) update.mutate({ id: role.id, ...body });
    else create.mutate(body);
  };
  return (
    <ItemForm noun="role" editing={role?.name} onDone={onDone} mutation={mutation} onSubmit={submit}>
      <div className="grid2">
        <NameAndDescription error={mutation.error} item={role} />
        <Field
          label="Kind"
          error={mutation.error}
          field="type"
          hint={role ? 'A role keeps its kind.' : 'A root role holds everywhere; a project role in the projects it is given in.'}
        >
          <select name="type" value={type} disabled={role !== undefined} onChange={(event) => setType(event.target.value as CustomType)}>
            <option value="custom">Project role</option>
            <option value="root-custom">Root role</option>
          </select>
        </Field>
      </div>
      <Loaded query={catalogue} what="the permissions">
        {(data) =>
          type === 'root-custom' ? (
            <PermissionChecks title="Permissions" permissions={data.permissions.root} held={held} />
          ) : (
            <>
              <PermissionChecks title="In the whole project" permissions={data.permissions.project} held={held} />
              <EnvironmentMatrix catalogue={data.permissions} held={held} />
            </>
          )
        }
      </Loaded>
    </ItemForm>
  );
}

function EditRole({ id, onDone }: { id: number; onDone: () => void }) {
  const role = useQuery(queries.role(id));
  return (
    <Loaded query={role} what="the role">
      {(data) => <RoleForm role={data} onDone={onDone} />}
    </Loaded>
  );
}

export function AdminRoles() {
  const roles = useQuery(queries.roles());
  return (
    <AdminList
      title="Roles"
      intro="Roles are made of permissions. Root roles hold everywhere; project roles hold in the projects they are given in, and their flag permissions may be limited to some environments (change development, not production). The built-in roles cannot be changed."
      query={roles}
      items={(data) => data.roles}
      columns={['Role', 'Kind', 'Description']}
      cells={(role) => (
        <>
          <NameCell name={role.name} />
          <td>
            <span className="badge">{TYPE_NAMES[role.type] ?? role.type}</span>
          </td>
          <td className="small">{role.description ?? '—'}</td>
        </>
      )}
      changeable={isCustom}
      edit={(role, done) => <EditRole id={role.id} onDone={done} />}
      remove={{ action: actions.deleteRole }}
      noun="role"
      create={(done) => <RoleForm onDone={done} />}
    />
  );
}
