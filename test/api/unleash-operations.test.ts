import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { useTestApp } from '../helpers/test-app.js';

// Every operation of Unleash's open-source API (its 8.2.0 OpenAPI document, kept as a list in test/fixtures) has a
// route in Vexil, under Unleash's operationId, so clients generated from either document call things alike.

const { operations } = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/unleash-8.2.0-operations.json'), 'utf8')) as {
  operations: Array<{ method: string; path: string; operationId: string }>;
};

/** A path with its parameters' names left out: `/a/{id}` and `/a/:name` are one route. */
const shapeOf = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}|:[^/]+/g, '{}')}`;

describe("Unleash 8.2.0's open-source API", () => {
  const ctx = useTestApp();

  test('every operation has a route in Vexil, named as Unleash names it', async () => {
    const document = (await ctx.as().get('/docs/openapi.json')).json() as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const vexil = new Map(
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.entries(item).map(([method, operation]) => [shapeOf(method, path), operation.operationId] as const),
      ),
    );
    assert.equal(operations.length, 211);
    assert.deepEqual(
      operations
        .filter((operation) => !vexil.has(shapeOf(operation.method, operation.path)))
        .map((operation) => `${operation.operationId}: ${operation.method} ${operation.path}`),
      [],
      'operations missing from Vexil',
    );
    assert.deepEqual(
      operations
        .filter((operation) => vexil.get(shapeOf(operation.method, operation.path)) !== operation.operationId)
        .map(
          (operation) =>
            `${operation.method} ${operation.path}: Unleash ${operation.operationId}, Vexil ${vexil.get(shapeOf(operation.method, operation.path))}`,
        ),
      [],
      'operations Vexil names otherwise',
    );
  });
});
