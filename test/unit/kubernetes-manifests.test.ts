import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';

/*
 * The Kubernetes manifests (deploy/kubernetes), rendered as an operator renders them (`kubectl kustomize`, skipped
 * with a message where kubectl is missing): what each overlay holds, and the rules every workload keeps. The image
 * check (`npm run check:image`) runs them with `podman kube play` and reads the edge's SDK paths.
 */
const ROOT = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url));
const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
const missing = kubectl.status === 0 ? false : 'kubectl is not installed: the manifests are not rendered here';

interface Resource {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  livenessProbe?: { httpGet?: { path: string } };
  readinessProbe?: { httpGet?: { path: string } };
  startupProbe?: { httpGet?: { path: string } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
}

function render(overlay: string): Resource[] {
  const result = spawnSync('kubectl', ['kustomize', `${ROOT}overlays/${overlay}`], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return parseAllDocuments(result.stdout).map((document) => document.toJS() as Resource);
}

const byKind = (resources: Resource[]) => resources.map((resource) => `${resource.kind}/${resource.metadata.name}`).sort();
const deployment = (resources: Resource[], name: string) => resources.find((r) => r.kind === 'Deployment' && r.metadata.name === name)!;
const podSpec = (resource: Resource) =>
  (resource.spec as { template: { spec: Record<string, unknown> & { containers: Container[] } } }).template.spec;
const container = (resource: Resource) => podSpec(resource).containers[0]!;

describe('the Kubernetes manifests', { skip: missing }, () => {
  it('production: both workloads, their services and disruption budgets, the edge autoscaled, in the vexil namespace', () => {
    const resources = render('production');
    assert.deepEqual(byKind(resources), [
      'Deployment/vexil-edge',
      'Deployment/vexil-server',
      'HorizontalPodAutoscaler/vexil-edge',
      'PodDisruptionBudget/vexil-edge',
      'PodDisruptionBudget/vexil-server',
      'Service/vexil-edge',
      'Service/vexil-server',
    ]);
    assert.deepEqual(new Set(resources.map((resource) => resource.metadata.namespace)), new Set(['vexil']));
    assert.equal((deployment(resources, 'vexil-server').spec as { replicas: number }).replicas, 3);
    const hpa = resources.find((resource) => resource.kind === 'HorizontalPodAutoscaler')!.spec as {
      minReplicas: number;
      maxReplicas: number;
    };
    assert.deepEqual([hpa.minReplicas, hpa.maxReplicas], [3, 20]);
    assert.equal(container(deployment(resources, 'vexil-server')).image, 'ghcr.io/vexil/vexil:0.1.0');
    assert.equal(
      container(deployment(resources, 'vexil-server')).env!.find((e) => e.name === 'BASE_URL')?.value,
      'https://flags.example.com',
    );
  });

  it('small: one of each, no autoscaler', () => {
    const resources = render('small');
    assert.ok(!resources.some((resource) => resource.kind === 'HorizontalPodAutoscaler'));
    assert.deepEqual(
      resources.filter((r) => r.kind === 'Deployment').map((r) => [r.metadata.name, (r.spec as { replicas: number }).replicas]),
      [
        ['vexil-edge', 1],
        ['vexil-server', 1],
      ],
    );
  });

  it("probes keep their meaning: the server's liveness never waits for the database; the edge's are its backstage", () => {
    const resources = render('production');
    const server = container(deployment(resources, 'vexil-server'));
    assert.deepEqual(
      [server.livenessProbe?.httpGet?.path, server.readinessProbe?.httpGet?.path, server.startupProbe?.httpGet?.path],
      ['/health/live', '/ready', '/health'],
    );
    const edge = container(deployment(resources, 'vexil-edge'));
    assert.deepEqual(
      [edge.livenessProbe?.httpGet?.path, edge.readinessProbe?.httpGet?.path],
      ['/internal-backstage/health', '/internal-backstage/ready'],
    );
    assert.equal(edge.resources?.limits?.memory, '128Mi', "Unleash Edge's limit");
  });

  it("the edge runs with npm run edge's options, and a heap of half its memory limit (V8 would size it from the machine)", () => {
    const edge = container(deployment(render('production'), 'vexil-edge'));
    const script = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')).scripts.edge as string;
    const scriptOptions = script
      .split(/\bnode\b/)[1]!
      .trim()
      .split(/\s+/)
      .filter((argument) => argument.startsWith('--'));
    const limitMiB = Number(/^(\d+)Mi$/.exec(edge.resources?.limits?.memory ?? '')?.[1]);
    const [node, ...rest] = edge.command ?? [];
    assert.deepEqual([node, rest.at(-1)], ['node', 'dist/edge/main.js']);
    assert.deepEqual(rest.slice(0, -1).sort(), [...scriptOptions, `--max-old-space-size=${limitMiB / 2}`].sort());
  });

  it('every workload runs unprivileged, read-only, with resources, and its secrets only as references', () => {
    for (const overlay of ['production', 'small']) {
      const resources = render(overlay);
      assert.ok(!resources.some((resource) => resource.kind === 'Secret'), 'no Secret is shipped: the operator makes it');
      for (const workload of resources.filter((resource) => resource.kind === 'Deployment')) {
        const spec = podSpec(workload) as { securityContext?: { runAsNonRoot?: boolean }; automountServiceAccountToken?: boolean };
        assert.equal(spec.securityContext?.runAsNonRoot, true, workload.metadata.name);
        assert.equal(spec.automountServiceAccountToken, false, workload.metadata.name);
        for (const each of podSpec(workload).containers) {
          assert.deepEqual(
            [
              each.securityContext?.allowPrivilegeEscalation,
              each.securityContext?.readOnlyRootFilesystem,
              each.securityContext?.capabilities?.drop,
            ],
            [false, true, ['ALL']],
            `${workload.metadata.name}/${each.name}`,
          );
          assert.ok(
            each.resources?.requests?.cpu && each.resources.requests.memory && each.resources.limits?.memory,
            `${each.name} has resources`,
          );
          for (const name of ['DATABASE_URL', 'INIT_ADMIN_API_TOKENS', 'TOKENS']) {
            const variable = each.env?.find((entry) => entry.name === name);
            if (variable) assert.ok(variable.value === undefined && variable.valueFrom?.secretKeyRef, `${name} is a reference to a Secret`);
          }
        }
      }
    }
  });
});
