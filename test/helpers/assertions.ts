import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { eventsSince, lastEventId, type StoredEvent } from './events.js';
import type { Client, TestApp } from './test-app.js';

export function expectStatus(response: LightMyRequestResponse, status: number): void {
  assert.equal(response.statusCode, status, `expected ${status}, got ${response.statusCode}: ${response.body}`);
}

/** Asserts Unleash's error body and returns it for further checks. */
export function expectError(response: LightMyRequestResponse, status: number, name: string) {
  expectStatus(response, status);
  const body = response.json() as {
    id: string;
    name: string;
    message: string;
    details: Array<{ message: string; path?: string }>;
    permissions?: string[];
  };
  assert.equal(body.name, name);
  assert.match(body.id, /^[0-9a-f-]{36}$/);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.ok(Array.isArray(body.details) && body.details.length > 0, 'details must list at least one problem');
  return body;
}

export interface ExpectedEvent {
  type: string;
  featureName: string | null;
  project: string | null;
  environment?: string | null;
  createdBy?: string;
  createdByUserId?: number;
  data: unknown;
  preData: unknown;
}

/**
 * The one event `events` holds: of `type`, and with the data and preData given (each compared only when given).
 * Answers it, for a test to look further.
 */
export function onlyEvent(events: StoredEvent[], type: string, expected: { data?: unknown; preData?: unknown } = {}): StoredEvent {
  assert.deepEqual(
    events.map((event) => event.type),
    [type],
  );
  const event = events[0]!;
  if ('data' in expected) assert.deepEqual(event.data, expected.data);
  if ('preData' in expected) assert.deepEqual(event.preData, expected.preData);
  return event;
}

/** Compares the events written with the expected ones, field by field, in order: by the admin token and untagged unless told. */
export function assertEvents(events: StoredEvent[], expected: ExpectedEvent[]): void {
  assert.deepEqual(
    events.map((event) => ({
      type: event.type,
      featureName: event.featureName,
      project: event.project,
      environment: event.environment,
      createdBy: event.createdBy,
      createdByUserId: event.createdByUserId,
      data: event.data,
      preData: event.preData,
      tags: event.tags,
    })),
    expected.map((event) => ({
      type: event.type,
      featureName: event.featureName,
      project: event.project,
      environment: event.environment ?? null,
      createdBy: event.createdBy ?? 'admin-token',
      createdByUserId: event.createdByUserId ?? -42,
      data: event.data,
      preData: event.preData,
      tags: [],
    })),
  );
}

/** An error answer must name the input at `path` among its details. */
export function assertDetailAt(error: { details: Array<{ path?: string; message: string }> }, path: string): void {
  assert.ok(
    error.details.some((detail) => detail.path === path),
    `expected a detail at ${path}: ${JSON.stringify(error.details)}`,
  );
}

/**
 * Sends a request that must be refused: Unleash's error body with the status and name given, a detail at `path`
 * when given, no event recorded, and what `read` gives unchanged. Returns the error body.
 */
export async function expectRefused(
  ctx: Pick<TestApp, 'db'>,
  send: () => Promise<LightMyRequestResponse>,
  expected: { status: number; name: string; path?: string },
  read?: () => Promise<unknown>,
) {
  const before = await lastEventId(ctx);
  const stateBefore = await read?.();
  const error = expectError(await send(), expected.status, expected.name);
  if (expected.path) assertDetailAt(error, expected.path);
  if (read) assert.deepEqual(await read(), stateBefore);
  assert.deepEqual(await eventsSince(ctx, before), []);
  return error;
}

/** The body of a GET that must answer 200. */
export async function getOk<T>(client: Pick<Client, 'get'>, url: string): Promise<T> {
  const response = await client.get(url);
  expectStatus(response, 200);
  return response.json() as T;
}

/** A list Unleash answers as `{ version: 1, <key>: [...] }`, from a GET that must answer 200. */
export async function getVersionedList<T>(client: Pick<Client, 'get'>, url: string, key: string): Promise<T[]> {
  const body = await getOk<{ version: number } & Record<string, T[]>>(client, url);
  assert.equal(body.version, 1);
  return body[key]!;
}

/**
 * A sign-in through an identity provider refused: the browser goes back to the sign-in page, which shows the reason
 * the server put in its cookie (never in the URL, where anyone could write words of their own). Answers the reason.
 */
export function signInRefusal(response: LightMyRequestResponse): string {
  expectStatus(response, 302);
  assert.equal(response.headers.location, '/login?refused');
  const cookie = response.cookies.find((entry) => entry.name === 'vexil-sign-in-refused');
  assert.ok(cookie, 'the reason travels in a cookie');
  assert.equal(cookie.path, '/login');
  return cookie.value;
}
