import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { ApiError, whenSignedOut } from './api/errors';
import { Layout } from './components/layout';
import { AdminEnvironments } from './pages/admin-environments';
import { AdminContextFields } from './pages/admin-context-fields';
import { AdminSegments } from './pages/admin-segments';
import { AdminTagTypes } from './pages/admin-tag-types';
import { AdminProjects } from './pages/admin-projects';
import { AdminTokens } from './pages/admin-tokens';
import { AdminUsers } from './pages/admin-users';
import { AdminGroups } from './pages/admin-groups';
import { AdminRoles } from './pages/admin-roles';
import { AdminReleaseTemplates } from './pages/admin-release-templates';
import { AdminSdkSettings } from './pages/admin-sdk-settings';
import { AdminSignIn } from './pages/admin-sign-in';
import { AdminStrategies } from './pages/admin-strategies';
import { ConnectSdk } from './pages/connect-sdk';
import { AdminServiceAccounts } from './pages/admin-service-accounts';
import { ProjectAccess } from './pages/project-access';
import { ApplicationPage, Applications } from './pages/applications';
import { ChangeRequestPage } from './pages/change-request';
import { ChangeRequests } from './pages/change-requests';
import { EventLog } from './pages/event-log';
import { FlagPage } from './pages/flag/flag-page';
import { Flags } from './pages/flags/flags-page';
import { IntegrationPage, Integrations } from './pages/integrations';
import { NotFound } from './pages/not-found';
import { Profile } from './pages/profile';
import { Playground } from './pages/playground';
import { ProjectPage } from './pages/project';
import { ResetPassword } from './pages/reset-password';
import { Invite } from './pages/invite';
import { OAuthAuthorize } from './pages/oauth-authorize';
import { AdminInstance } from './pages/admin-instance';
import { SignIn } from './pages/sign-in';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A missing page or a forbidden one does not get better by asking again.
      retry: (failures, error) => failures < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
      refetchOnWindowFocus: true,
      staleTime: 5_000,
    },
  },
});

whenSignedOut(() => {
  // Pages for people who are not signed in: a 401 there is the page's own business.
  const { pathname } = window.location;
  if (pathname === '/login' || pathname === '/reset-password' || pathname.startsWith('/invite/')) return;
  queryClient.clear();
  const next = window.location.pathname + window.location.search;
  window.location.assign(`/login?next=${encodeURIComponent(next)}`);
});

const theme = localStorage.getItem('vexil-theme');
if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <Routes>
          <Route path="/login" element={<SignIn />} />
          <Route path="/reset-password" element={<ResetPassword />} />
          <Route path="/invite/:token" element={<Invite />} />
          <Route path="/oauth/authorize" element={<OAuthAuthorize />} />
          <Route element={<Layout />}>
            <Route index element={<Navigate to="/flags" replace />} />
            <Route path="flags" element={<Flags />} />
            <Route path="projects/:projectId" element={<ProjectPage />} />
            <Route path="projects/:projectId/access" element={<ProjectAccess />} />
            <Route path="projects/:projectId/flags/:flagName" element={<FlagPage />} />
            <Route path="projects/:projectId/change-requests/:id" element={<ChangeRequestPage />} />
            <Route path="applications" element={<Applications />} />
            <Route path="applications/:appName" element={<ApplicationPage />} />
            <Route path="playground" element={<Playground />} />
            <Route path="connect" element={<ConnectSdk />} />
            <Route path="admin/sdk-settings" element={<AdminSdkSettings />} />
            <Route path="admin/instance" element={<AdminInstance />} />
            <Route path="admin/sign-in" element={<AdminSignIn />} />
            <Route path="events" element={<EventLog />} />
            <Route path="change-requests" element={<ChangeRequests />} />
            <Route path="integrations" element={<Integrations />} />
            <Route path="integrations/:id" element={<IntegrationPage />} />
            <Route path="admin/projects" element={<AdminProjects />} />
            <Route path="admin/environments" element={<AdminEnvironments />} />
            <Route path="admin/tokens" element={<AdminTokens />} />
            <Route path="admin/users" element={<AdminUsers />} />
            <Route path="admin/groups" element={<AdminGroups />} />
            <Route path="admin/roles" element={<AdminRoles />} />
            <Route path="admin/release-templates" element={<AdminReleaseTemplates />} />
            <Route path="admin/strategies" element={<AdminStrategies />} />
            <Route path="admin/service-accounts" element={<AdminServiceAccounts />} />
            <Route path="admin/tag-types" element={<AdminTagTypes />} />
            <Route path="admin/segments" element={<AdminSegments />} />
            <Route path="admin/context-fields" element={<AdminContextFields />} />
            <Route path="profile" element={<Profile />} />
            <Route path="*" element={<NotFound />} />
          </Route>
        </Routes>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
