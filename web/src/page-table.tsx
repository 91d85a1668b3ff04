import { type ComponentType, lazy } from 'react';
import { matchPath } from 'react-router';

/**
 * Each page is a script of its own, fetched when it is first opened: the sign-in page and the layout load with the
 * app, so the first page a person sees does not wait for every other page's code (and charting library).
 */
interface Page {
  /** Fetches the page's script (at most once: the browser keeps the module). */
  preload: () => Promise<{ default: ComponentType }>;
  /** The page's component once its script is here. */
  loaded?: ComponentType;
  /** The page as React.lazy renders it, suspending until its script arrives. */
  lazy: ComponentType;
}

function lazyPage<Name extends string>(load: () => Promise<Record<Name, ComponentType>>, name: Name): Page {
  const page: Page = {
    preload: () =>
      load().then((module) => {
        page.loaded = module[name];
        return { default: page.loaded };
      }),
    lazy: lazy(() => page.preload()),
  };
  return page;
}

/**
 * One page of the table. A page whose script is already here renders at once: suspending on it anyway would show the
 * fallback, and React holds a revealed boundary back for 300 ms after a fallback (its Suspense throttling).
 */
export function PageView({ page }: { page: Page }) {
  const Page = page.loaded ?? page.lazy;
  return <Page />;
}

/** The pages outside the layout (signed out, or a page of their own), by path. */
export const PUBLIC_PAGES: Array<[path: string, page: Page]> = [
  ['/reset-password', lazyPage(() => import('./pages/reset-password'), 'ResetPassword')],
  ['/invite/:token', lazyPage(() => import('./pages/invite'), 'Invite')],
  ['/oauth/authorize', lazyPage(() => import('./pages/oauth-authorize'), 'OAuthAuthorize')],
];

/** The pages in the layout, by path. */
export const PAGES: Array<[path: string, page: Page]> = [
  ['flags', lazyPage(() => import('./pages/flags/flags-page'), 'Flags')],
  ['projects/:projectId', lazyPage(() => import('./pages/project/project-page'), 'ProjectPage')],
  ['projects/:projectId/access', lazyPage(() => import('./pages/project/project-access'), 'ProjectAccess')],
  ['projects/:projectId/experiments/:experimentName', lazyPage(() => import('./pages/project/experiment-page'), 'ExperimentPage')],
  ['projects/:projectId/flags/:flagName', lazyPage(() => import('./pages/flag/flag-page'), 'FlagPage')],
  ['projects/:projectId/change-requests/:id', lazyPage(() => import('./pages/change-request'), 'ChangeRequestPage')],
  ['applications', lazyPage(() => import('./pages/applications'), 'Applications')],
  ['applications/:appName', lazyPage(() => import('./pages/applications'), 'ApplicationPage')],
  ['playground', lazyPage(() => import('./pages/playground'), 'Playground')],
  ['connect', lazyPage(() => import('./pages/connect-sdk'), 'ConnectSdk')],
  ['admin/sdk-settings', lazyPage(() => import('./pages/admin/sdk-settings'), 'AdminSdkSettings')],
  ['admin/instance', lazyPage(() => import('./pages/admin/instance'), 'AdminInstance')],
  ['admin/sign-in', lazyPage(() => import('./pages/admin/sign-in'), 'AdminSignIn')],
  ['events', lazyPage(() => import('./pages/event-log'), 'EventLog')],
  ['change-requests', lazyPage(() => import('./pages/change-requests'), 'ChangeRequests')],
  ['integrations', lazyPage(() => import('./pages/integrations'), 'Integrations')],
  ['integrations/:id', lazyPage(() => import('./pages/integrations'), 'IntegrationPage')],
  ['admin/projects', lazyPage(() => import('./pages/admin/projects'), 'AdminProjects')],
  ['admin/environments', lazyPage(() => import('./pages/admin/environments'), 'AdminEnvironments')],
  ['admin/tokens', lazyPage(() => import('./pages/admin/tokens'), 'AdminTokens')],
  ['admin/users', lazyPage(() => import('./pages/admin/users'), 'AdminUsers')],
  ['admin/groups', lazyPage(() => import('./pages/admin/groups'), 'AdminGroups')],
  ['admin/roles', lazyPage(() => import('./pages/admin/roles'), 'AdminRoles')],
  ['admin/release-templates', lazyPage(() => import('./pages/admin/release-templates'), 'AdminReleaseTemplates')],
  ['admin/strategies', lazyPage(() => import('./pages/admin/strategies'), 'AdminStrategies')],
  ['admin/service-accounts', lazyPage(() => import('./pages/admin/service-accounts'), 'AdminServiceAccounts')],
  ['admin/tag-types', lazyPage(() => import('./pages/admin/tag-types'), 'AdminTagTypes')],
  ['admin/segments', lazyPage(() => import('./pages/admin/segments'), 'AdminSegments')],
  ['admin/context-fields', lazyPage(() => import('./pages/admin/context-fields'), 'AdminContextFields')],
  ['profile', lazyPage(() => import('./pages/profile'), 'Profile')],
];

// The page the browser opened starts loading now, beside the app's first requests, not after the layout has drawn.
// `/` leads to the flags page.
const openedPath = window.location.pathname === '/' ? '/flags' : window.location.pathname;
const opening = [...PUBLIC_PAGES, ...PAGES.map(([path, page]): [string, Page] => [`/${path}`, page])].find(([path]) =>
  matchPath(path, openedPath),
);
void opening?.[1].preload();
