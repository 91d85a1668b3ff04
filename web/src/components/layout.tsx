import { useQuery } from '@tanstack/react-query';
import { useState, Suspense } from 'react';
import { NavLink, Outlet } from 'react-router';
import { queries } from '../api/queries';
import { ErrorMessage, Loading } from './ui';

/** The signed-in user and what they may do; every page below the layout can read it. */
export function useMe() {
  return useQuery(queries.me());
}

/**
 * Whether the signed-in user holds the permission (Admins hold all): through their root role, or for `project`
 * through a role in it (in `environment`, when the role holds it there only). Pages offer only what will be accepted.
 */
export function useCan(permission: string, project?: string, environment?: string): boolean {
  const me = useMe().data;
  if (!me) return false;
  return me.permissions.some(
    (entry) =>
      (entry.permission === 'ADMIN' || entry.permission === permission) &&
      (entry.project === undefined || entry.project === project) &&
      (entry.environment === undefined || entry.environment === environment),
  );
}

/** Whether the user may change anything anywhere: any permission beyond reading, in every project or in one. */
function useChangesFlagsSomewhere(): boolean {
  const me = useMe().data;
  return me?.permissions.some((entry) => entry.permission !== 'READ') ?? false;
}

/**
 * The navigation: a link is `[path, label]`, with the permission its page reads with when that is more than `READ`,
 * so that nobody is offered a page that would only answer them with a refusal.
 */
const NAV: Array<[string, string, string?] | string> = [
  ['/flags', 'Flags'],
  ['/applications', 'Applications'],
  ['/playground', 'Playground'],
  ['/events', 'Event log'],
  ['/change-requests', 'Change requests'],
  ['/integrations', 'Integrations'],
  'Admin',
  ['/admin/projects', 'Projects'],
  ['/admin/environments', 'Environments'],
  ['/admin/release-templates', 'Release templates'],
  ['/admin/tokens', 'API tokens', 'READ_API_TOKEN'],
  ['/admin/sdk-settings', 'SDK settings'],
  ['/admin/users', 'Users', 'ADMIN'],
  ['/admin/sign-in', 'Sign-in', 'ADMIN'],
  ['/admin/groups', 'Groups', 'ADMIN'],
  ['/admin/roles', 'Roles'],
  ['/admin/service-accounts', 'Service accounts', 'ADMIN'],
  ['/admin/strategies', 'Strategies'],
  ['/admin/segments', 'Segments'],
  ['/admin/context-fields', 'Context fields'],
  ['/admin/tag-types', 'Tag types'],
  ['/admin/instance', 'Instance', 'ADMIN'],
];

/** A link of the navigation, shown only to someone who may read its page. */
function NavItem({ to, label, needs }: { to: string; label: string; needs: string | undefined }) {
  const may = useCan(needs ?? 'READ');
  if (needs !== undefined && !may) return null;
  return (
    <NavLink to={to} className="nav">
      {label}
    </NavLink>
  );
}

function ThemeSwitch() {
  const [theme, setTheme] = useState(document.documentElement.dataset.theme ?? 'system');
  const choose = (value: string) => {
    setTheme(value);
    if (value === 'system') {
      delete document.documentElement.dataset.theme;
      localStorage.removeItem('vexil-theme');
    } else {
      document.documentElement.dataset.theme = value;
      localStorage.setItem('vexil-theme', value);
    }
  };
  return (
    <label className="small">
      Theme{' '}
      <select value={theme} onChange={(event) => choose(event.target.value)}>
        <option value="system">System</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

export function Layout() {
  const me = useMe();
  const canChangeFlags = useChangesFlagsSomewhere();
  const signOut = async () => {
    await fetch('/logout', { method: 'POST', credentials: 'same-origin' });
    window.location.assign('/login');
  };
  return (
    <div className="shell">
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <nav className="sidebar" aria-label="Main">
        <NavLink to="/flags" className="brand">
          <img src="/favicon.svg" alt="" /> Vexil
        </NavLink>
        {NAV.map((item) =>
          typeof item === 'string' ? (
            <div key={item} className="section">
              {item}
            </div>
          ) : (
            <NavItem key={item[0]} to={item[0]} label={item[1]} needs={item[2]} />
          ),
        )}
        <div className="me">
          {me.data && (
            <NavLink to="/profile" data-testid="signed-in-as">
              {me.data.user.username ?? me.data.user.email}
            </NavLink>
          )}
          <ThemeSwitch />
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </nav>
      <main id="content" tabIndex={-1}>
        {me.data && !canChangeFlags && (
          <p className="notice" role="note">
            You have read-only access: you can look at everything, and an Admin can give you a role that changes things.
          </p>
        )}
        {me.isPending ? (
          <Loading what="your account" />
        ) : me.error ? (
          <ErrorMessage error={me.error} />
        ) : (
          // A page's script arrives when it is first opened (main.tsx); the navigation stays meanwhile.
          <Suspense fallback={<Loading what="the page" />}>
            <Outlet />
          </Suspense>
        )}
      </main>
    </div>
  );
}
