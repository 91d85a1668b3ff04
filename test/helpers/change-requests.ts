import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus } from './assertions.js';
import { createUserSession, uniqueName } from './fixtures.js';
import { type Client, type TestApp, useTestApp } from './test-app.js';
import { featurePath, projectPath } from './projects.js';

/** A change request as the API shows it (spec 2.4), as far as the tests read it. */
export interface ChangeRequest {
  id: number;
  title: string;
  environment: string;
  minApprovals: number;
  project: string;
  state: string;
  features: Array<{
    name: string;
    conflict?: string;
    changes: Array<{ id: number; action: string; payload: unknown; conflict?: string; createdBy: { id: number; username: string } }>;
    defaultChange?: { action: string; payload: unknown };
  }>;
  segments: Array<{ id: number; action: string; name: string; payload: unknown; conflict?: string }>;
  approvals: Array<{ createdBy: { id: number; username: string }; createdAt: string }>;
  rejections: Array<{ createdBy: { id: number; username: string }; createdAt: string }>;
  comments: Array<{ id: number; text: string; createdBy: { id: number; username: string }; createdAt: string }>;
  createdBy: { id: number; username: string; imageUrl: string | null };
  createdAt: string;
  schedule?: { scheduledAt: string; status: string; failureReason?: string };
  appliedBy?: { id: number; username: string };
  appliedAt?: string;
}

export interface Person {
  id: number;
  username: string;
  client: Client;
}

/** The cast of a review: an author and two reviewers (Editors), a Viewer and an Admin, each logged in. */
export interface Team {
  author: Person;
  reviewer: Person;
  secondReviewer: Person;
  viewer: Person;
  admin: Person;
}

async function person(ctx: TestApp, role: 'Admin' | 'Editor' | 'Viewer'): Promise<Person> {
  const session = await createUserSession(ctx, role);
  return { id: session.id, username: session.username, client: ctx.withCookie(session.cookie) };
}

/** The app a test file shares and a team of five people in it; both are filled in when the file's tests start. */
export function useTeamTestApp(): { ctx: TestApp; team: Team } {
  const team = {} as Team;
  const ctx = useTestApp({}, async (app) => {
    Object.assign(team, await createTeam(app));
  });
  return { ctx, team };
}

export async function createTeam(ctx: TestApp): Promise<Team> {
  return {
    author: await person(ctx, 'Editor'),
    reviewer: await person(ctx, 'Editor'),
    secondReviewer: await person(ctx, 'Editor'),
    viewer: await person(ctx, 'Viewer'),
    admin: await person(ctx, 'Admin'),
  };
}

export { featurePath, projectPath };
export const strategiesPath = (project: string, flag: string, environment = 'production') =>
  `${featurePath(project, flag)}/environments/${environment}/strategies`;
export const proposePath = (project: string, environment = 'production') =>
  `${projectPath(project)}/environments/${environment}/change-requests`;
export const changeRequestPath = (project: string, id: number) => `${projectPath(project)}/change-requests/${id}`;

/** A project of its own with development and production, and `flags` flags in it. */
export async function createProjectWithFlags(ctx: TestApp, flags = 1): Promise<{ project: string; flags: string[] }> {
  const project = uniqueName('cr');
  expectStatus(
    await ctx.admin.post('/api/admin/projects', { id: project, name: project, environments: ['development', 'production'] }),
    201,
  );
  const names: string[] = [];
  for (let i = 0; i < flags; i++) {
    const flag = uniqueName('flag');
    expectStatus(await ctx.admin.post(`${projectPath(project)}/features`, { name: flag }), 201);
    names.push(flag);
  }
  return { project, flags: names };
}

export async function enableChangeRequests(
  ctx: TestApp,
  project: string,
  requiredApprovals = 1,
  environment = 'production',
): Promise<void> {
  const response = await ctx.admin.put(`${projectPath(project)}/environments/${environment}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals,
  });
  expectStatus(response, 204);
}

/** A project whose production environment requires change requests, with flags in it. */
export async function createProtectedProject(ctx: TestApp, options: { flags?: number; requiredApprovals?: number } = {}) {
  const created = await createProjectWithFlags(ctx, options.flags ?? 1);
  await enableChangeRequests(ctx, created.project, options.requiredApprovals ?? 1);
  return created;
}

export async function propose(client: Client, project: string, body: unknown, environment = 'production'): Promise<ChangeRequest> {
  const response = await client.post(proposePath(project, environment), body);
  expectStatus(response, 200);
  return response.json() as ChangeRequest;
}

export function setState(client: Client, project: string, id: number, body: unknown): Promise<LightMyRequestResponse> {
  return client.put(`${changeRequestPath(project, id)}/state`, body);
}

export async function moveTo(client: Client, project: string, id: number, body: unknown): Promise<ChangeRequest> {
  const response = await setState(client, project, id, body);
  expectStatus(response, 200);
  return response.json() as ChangeRequest;
}

export async function getChangeRequest(client: Client, project: string, id: number): Promise<ChangeRequest> {
  const response = await client.get(changeRequestPath(project, id));
  expectStatus(response, 200);
  return response.json() as ChangeRequest;
}

/** Proposes the changes as the author, sends them to review and has the reviewer approve: ready to apply. */
export async function approvedChangeRequest(team: Team, project: string, changes: unknown): Promise<ChangeRequest> {
  const draft = await propose(team.author.client, project, changes);
  await moveTo(team.author.client, project, draft.id, { state: 'In review' });
  const approved = await moveTo(team.reviewer.client, project, draft.id, { state: 'Approved' });
  assert.equal(approved.state, 'Approved');
  return approved;
}

export async function addStrategyDirectly(client: Client, project: string, flag: string, body: unknown, environment = 'production') {
  const response = await client.post(strategiesPath(project, flag, environment), body);
  expectStatus(response, 200);
  return response.json() as { id: string; name: string; sortOrder: number; parameters: Record<string, string> };
}
