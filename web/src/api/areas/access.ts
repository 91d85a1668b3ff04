import { queryOptions } from '@tanstack/react-query';
import { api, ok } from '../client';
import { action, byId, keys, type JsonBody } from './common';

/** The parameters of an agent's authorization request (OAuth), as its client put them in the address it opened. */
export type McpAuthorizationQuery = JsonBody<'/api/admin/oauth/authorization', 'post'> extends infer Body ? Omit<Body, 'approve'> : never;

/** People and what they may do: the signed-in user, users, groups, service accounts, project access, API tokens. */
export const accessQueries = {
  me: () => queryOptions({ queryKey: keys.me, queryFn: () => ok(api.GET('/api/admin/user')), staleTime: 60_000 }),
  users: () => queryOptions({ queryKey: keys.users, queryFn: () => ok(api.GET('/api/admin/user-admin')) }),
  signOns: (offset: number, limit: number) =>
    queryOptions({
      queryKey: keys.signOns(offset),
      queryFn: () => ok(api.GET('/api/admin/signons', { params: { query: { offset, limit } } })),
    }),
  /** Who an identity provider may bring in (its sign-in policy). */
  signInSettings: (provider: 'oidc' | 'saml') =>
    queryOptions({
      queryKey: keys.signInSettings(provider),
      queryFn: () => ok(provider === 'oidc' ? api.GET('/api/admin/auth/oidc/settings') : api.GET('/api/admin/auth/saml/settings')),
    }),
  scimToken: () => queryOptions({ queryKey: keys.scimToken, queryFn: () => ok(api.GET('/api/admin/scim/token')) }),
  myMcpTokens: () => queryOptions({ queryKey: keys.mcpTokens, queryFn: () => ok(api.GET('/api/admin/user/mcp-tokens')) }),
  /** An agent's authorization request, as the consent page shows it; a bad one is an error, never retried. */
  mcpAuthorizationRequest: (query: McpAuthorizationQuery) =>
    queryOptions({
      queryKey: ['mcp-authorization', query],
      queryFn: () => ok(api.GET('/api/admin/oauth/authorization', { params: { query } })),
      retry: false,
    }),
  mySessions: () => queryOptions({ queryKey: keys.sessionsOf('me'), queryFn: () => ok(api.GET('/api/admin/user/sessions')) }),
  userSessions: (userId: number) =>
    queryOptions({ queryKey: keys.sessionsOf(userId), queryFn: () => ok(api.GET('/api/admin/user-admin/{id}/sessions', byId(userId))) }),
  resetLink: (token: string) =>
    queryOptions({
      queryKey: ['reset-link', token],
      queryFn: () => ok(api.GET('/auth/reset/validate', { params: { query: { token } } })),
      retry: false,
    }),
  inviteLinks: () => queryOptions({ queryKey: keys.inviteLinks, queryFn: () => ok(api.GET('/api/admin/invite-link/tokens')) }),
  /** Whether an invite link can still be used: the sign-up page asks before it shows its form. */
  inviteLinkValid: (secret: string) =>
    queryOptions({
      queryKey: ['invite-link-valid', secret],
      queryFn: () => ok(api.GET('/invite/{token}/validate', { params: { path: { token: secret } } })).then(() => true),
      retry: false,
    }),
  signInOptions: () => queryOptions({ queryKey: keys.signInOptions, queryFn: () => ok(api.GET('/auth/options')), staleTime: 300_000 }),
  roles: () => queryOptions({ queryKey: keys.roles, queryFn: () => ok(api.GET('/api/admin/roles')) }),
  role: (id: number) => queryOptions({ queryKey: keys.role(id), queryFn: () => ok(api.GET('/api/admin/roles/{id}', byId(id))) }),
  permissions: () => queryOptions({ queryKey: keys.permissions, queryFn: () => ok(api.GET('/api/admin/permissions')) }),
  groups: () => queryOptions({ queryKey: keys.groups, queryFn: () => ok(api.GET('/api/admin/groups')) }),
  serviceAccounts: () => queryOptions({ queryKey: keys.serviceAccounts, queryFn: () => ok(api.GET('/api/admin/service-account')) }),
  projectAccess: (projectId: string) =>
    queryOptions({
      queryKey: keys.projectAccess(projectId),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/access', { params: { path: { projectId } } })),
    }),
  apiTokens: () => queryOptions({ queryKey: keys.apiTokens, queryFn: () => ok(api.GET('/api/admin/api-tokens')) }),
  projectApiTokens: (projectId: string) =>
    queryOptions({
      queryKey: keys.projectApiTokens(projectId),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/api-tokens', { params: { path: { projectId } } })),
    }),
};

export const accessActions = {
  signIn: action((body: JsonBody<'/auth/simple/login', 'post'>) => ok(api.POST('/auth/simple/login', { body })), []),
  askForResetEmail: action((email: string) => ok(api.POST('/auth/reset/password-email', { body: { email } })), []),
  createInviteLink: action(
    (body: JsonBody<'/api/admin/invite-link/tokens', 'post'>) => ok(api.POST('/api/admin/invite-link/tokens', { body })),
    [keys.inviteLinks, keys.events],
  ),
  setInviteLinkEnabled: action(
    ({ id, enabled }: { id: number; enabled: boolean }) =>
      ok(api.PUT('/api/admin/invite-link/tokens/{token}', { params: { path: { token: String(id) } }, body: { enabled } })),
    [keys.inviteLinks, keys.events],
  ),
  signUpWithInvite: action(
    ({ secret, ...body }: { secret: string } & JsonBody<'/invite/{token}/signup', 'post'>) =>
      ok(api.POST('/invite/{token}/signup', { params: { path: { token: secret } }, body })),
    [],
  ),
  resetPassword: action((body: JsonBody<'/auth/reset/password', 'post'>) => ok(api.POST('/auth/reset/password', { body })), []),
  changeOwnPassword: action(
    (body: JsonBody<'/api/admin/user/change-password', 'post'>) => ok(api.POST('/api/admin/user/change-password', { body })),
    [keys.events],
  ),

  setSignInSettings: action(
    ({ provider, ...body }: { provider: 'oidc' | 'saml' } & JsonBody<'/api/admin/auth/oidc/settings', 'post'>) =>
      ok(provider === 'oidc' ? api.POST('/api/admin/auth/oidc/settings', { body }) : api.POST('/api/admin/auth/saml/settings', { body })),
    ({ provider }) => [keys.signInSettings(provider), keys.events],
  ),
  createRole: action(
    (body: JsonBody<'/api/admin/roles', 'post'>) => ok(api.POST('/api/admin/roles', { body })),
    [keys.roles, keys.users, keys.events],
  ),
  updateRole: action(
    ({ id, ...body }: { id: number } & JsonBody<'/api/admin/roles/{id}', 'put'>) =>
      ok(api.PUT('/api/admin/roles/{id}', { ...byId(id), body })),
    [keys.roles, keys.events],
  ),
  deleteRole: action((id: number) => ok(api.DELETE('/api/admin/roles/{id}', byId(id))), [keys.roles, keys.users, keys.events]),
  createScimToken: action(() => ok(api.POST('/api/admin/scim/token')), [keys.scimToken, keys.events]),
  deleteScimToken: action(() => ok(api.DELETE('/api/admin/scim/token')), [keys.scimToken, keys.events]),
  answerMcpAuthorization: action(
    (body: JsonBody<'/api/admin/oauth/authorization', 'post'>) => ok(api.POST('/api/admin/oauth/authorization', { body })),
    [keys.mcpTokens, keys.events],
  ),
  revokeMcpToken: action((id: number) => ok(api.DELETE('/api/admin/user/mcp-tokens/{id}', byId(id))), [keys.mcpTokens, keys.events]),
  endMySession: action(
    (sessionId: number) => ok(api.DELETE('/api/admin/user/sessions/{sessionId}', { params: { path: { sessionId: String(sessionId) } } })),
    [keys.sessions, keys.events],
  ),
  endMyOtherSessions: action(() => ok(api.DELETE('/api/admin/user/sessions')), [keys.sessions, keys.events]),
  endUserSession: action(
    ({ userId, sessionId }: { userId: number; sessionId: number }) =>
      ok(
        api.DELETE('/api/admin/user-admin/{id}/sessions/{sessionId}', {
          params: { path: { id: String(userId), sessionId: String(sessionId) } },
        }),
      ),
    [keys.sessions, keys.events],
  ),
  endUserSessions: action(
    (userId: number) => ok(api.DELETE('/api/admin/user-admin/{id}/sessions', byId(userId))),
    [keys.sessions, keys.events],
  ),

  createApiToken: action(
    (body: JsonBody<'/api/admin/api-tokens', 'post'>) => ok(api.POST('/api/admin/api-tokens', { body })),
    [keys.apiTokens, keys.events],
  ),
  createProjectApiToken: action(
    ({ projectId, ...body }: { projectId: string } & JsonBody<'/api/admin/projects/{projectId}/api-tokens', 'post'>) =>
      ok(api.POST('/api/admin/projects/{projectId}/api-tokens', { params: { path: { projectId } }, body })),
    ({ projectId }) => [keys.apiTokens, keys.projectStatus(projectId), keys.events],
  ),
  deleteProjectApiToken: action(
    ({ projectId, token }: { projectId: string; token: string }) =>
      ok(api.DELETE('/api/admin/projects/{projectId}/api-tokens/{token}', { params: { path: { projectId, token } } })),
    ({ projectId }) => [keys.apiTokens, keys.projectStatus(projectId), keys.events],
  ),
  deleteApiToken: action(
    (token: string) => ok(api.DELETE('/api/admin/api-tokens/{token}', { params: { path: { token } } })),
    [keys.apiTokens, keys.events],
  ),

  createUser: action(
    (body: JsonBody<'/api/admin/user-admin', 'post'>) => ok(api.POST('/api/admin/user-admin', { body })),
    [keys.users, keys.events],
  ),
  updateUser: action(
    ({ id, ...body }: { id: number } & JsonBody<'/api/admin/user-admin/{id}', 'put'>) =>
      ok(api.PUT('/api/admin/user-admin/{id}', { ...byId(id), body })),
    [keys.users, keys.events],
  ),
  makeResetLink: action(
    (emailOrUsername: string) => ok(api.POST('/api/admin/user-admin/reset-password', { body: { id: emailOrUsername } })),
    [keys.events],
  ),
  deleteUser: action((id: number) => ok(api.DELETE('/api/admin/user-admin/{id}', byId(id))), [keys.users, keys.events]),
  setUserPassword: action(
    ({ id, password }: { id: number; password: string }) =>
      ok(api.POST('/api/admin/user-admin/{id}/change-password', { ...byId(id), body: { password } })),
    [keys.users, keys.events],
  ),

  createGroup: action(
    (body: JsonBody<'/api/admin/groups', 'post'>) => ok(api.POST('/api/admin/groups', { body })),
    [keys.groups, keys.events],
  ),
  updateGroup: action(
    ({ id, ...body }: { id: number } & JsonBody<'/api/admin/groups/{groupId}', 'put'>) =>
      ok(api.PUT('/api/admin/groups/{groupId}', { params: { path: { groupId: String(id) } }, body })),
    [keys.groups, keys.events, keys.me],
  ),
  deleteGroup: action(
    (id: number) => ok(api.DELETE('/api/admin/groups/{groupId}', { params: { path: { groupId: String(id) } } })),
    [keys.groups, keys.events, keys.me],
  ),

  addProjectAccess: action(
    ({ projectId, ...body }: { projectId: string } & JsonBody<'/api/admin/projects/{projectId}/access', 'post'>) =>
      ok(api.POST('/api/admin/projects/{projectId}/access', { params: { path: { projectId } }, body })),
    ({ projectId }) => [keys.projectAccess(projectId), keys.events, keys.me],
  ),
  setProjectRoles: action(
    ({ projectId, holder, id, roles }: { projectId: string; holder: 'user' | 'group'; id: number; roles: number[] }) =>
      holder === 'user'
        ? ok(
            api.PUT('/api/admin/projects/{projectId}/users/{userId}/roles', {
              params: { path: { projectId, userId: String(id) } },
              body: { roles },
            }),
          )
        : ok(
            api.PUT('/api/admin/projects/{projectId}/groups/{groupId}/roles', {
              params: { path: { projectId, groupId: String(id) } },
              body: { roles },
            }),
          ),
    ({ projectId }) => [keys.projectAccess(projectId), keys.events, keys.me],
  ),
  removeProjectAccess: action(
    ({ projectId, holder, id }: { projectId: string; holder: 'user' | 'group'; id: number }) =>
      holder === 'user'
        ? ok(api.DELETE('/api/admin/projects/{projectId}/users/{userId}/roles', { params: { path: { projectId, userId: String(id) } } }))
        : ok(
            api.DELETE('/api/admin/projects/{projectId}/groups/{groupId}/roles', { params: { path: { projectId, groupId: String(id) } } }),
          ),
    ({ projectId }) => [keys.projectAccess(projectId), keys.events, keys.me],
  ),

  createServiceAccount: action(
    (body: JsonBody<'/api/admin/service-account', 'post'>) => ok(api.POST('/api/admin/service-account', { body })),
    [keys.serviceAccounts, keys.events],
  ),
  updateServiceAccount: action(
    ({ id, ...body }: { id: number } & JsonBody<'/api/admin/service-account/{id}', 'put'>) =>
      ok(api.PUT('/api/admin/service-account/{id}', { ...byId(id), body })),
    [keys.serviceAccounts, keys.events],
  ),
  deleteServiceAccount: action(
    (id: number) => ok(api.DELETE('/api/admin/service-account/{id}', byId(id))),
    [keys.serviceAccounts, keys.events],
  ),
  createServiceAccountToken: action(
    ({ id, ...body }: { id: number } & JsonBody<'/api/admin/service-account/{id}/token', 'post'>) =>
      ok(api.POST('/api/admin/service-account/{id}/token', { ...byId(id), body })),
    [keys.serviceAccounts, keys.events],
  ),
  deleteServiceAccountToken: action(
    ({ id, tokenId }: { id: number; tokenId: number }) =>
      ok(api.DELETE('/api/admin/service-account/{id}/token/{tokenId}', { params: { path: { id: String(id), tokenId: String(tokenId) } } })),
    [keys.serviceAccounts, keys.events],
  ),
};
