/**
 * Builds the container image from the Dockerfile with podman and checks it as a user would run it: healthy on an
 * empty volume, the first admin's password printed once, a flag made through the API read by the official SDK,
 * data kept across a restart on the same volume, SIGTERM obeyed within 10 s with no acknowledged write lost, a
 * process that is not root, a read-only root file system, Vexil Edge from the same image, and the size the image
 * adds to its base.
 *
 * `node --import tsx scripts/check-container-image.ts` (CI runs it where podman can be installed). The machines that
 * run it reach no container registry, so the Dockerfile's base image is a stand-in of the same name, made once: Debian
 * (debootstrap, minbase, of the release the base is named after) with the Node running this script in /usr/local, as
 * the official node image has it. `.ci/run` runs it on the Node line the Dockerfile names. A user's machine pulls the
 * real one.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import autocannon from 'autocannon';
import { Unleash } from 'unleash-client';
import { parseAllDocuments } from 'yaml';
import { freePort } from '../test/helpers/free-port.js';

const ROOT = join(import.meta.dirname, '..');
/** The Dockerfile's base (its `FROM node:<line>-<debian release>-slim`), one name for every stage. */
const BASE = (() => {
  const from = /^FROM node:(\d+)-([a-z]+)-slim\b/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  if (!from) throw new Error('the Dockerfile has no FROM node:<line>-<debian release>-slim');
  return { line: from[1]!, release: from[2]! };
})();
const BASE_IMAGE = `docker.io/library/node:${BASE.line}-${BASE.release}-slim`;
const IMAGE = 'localhost/vexil:check';
const work = mkdtempSync(join(tmpdir(), 'vexil-image-'));

// The sandbox these checks run in refuses crun and the default ulimits; runc with none set works.
const containersConf = join(work, 'containers.conf');
writeFileSync(containersConf, '[containers]\ndefault_ulimits = []\n');
const podmanEnv = { ...process.env, CONTAINERS_CONF: containersConf };

function podman(args: string[], options: { quiet?: boolean; allowFailure?: boolean } = {}): string {
  const result = spawnSync('podman', ['--runtime', '/usr/sbin/runc', ...args], {
    env: podmanEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', options.quiet ? 'pipe' : 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0 && !options.allowFailure) {
    throw new Error(`podman ${args.join(' ')} exited with ${result.status}: ${result.stderr ?? ''}`);
  }
  return result.stdout.trim();
}

let failures = 0;
function check(what: string, holds: boolean, detail = ''): void {
  process.stdout.write(`${holds ? 'ok' : 'FAILED'} - ${what}${detail ? ` (${detail})` : ''}\n`);
  if (!holds) failures++;
}

function skip(reason: string): never {
  process.stdout.write(`The container image check is skipped: ${reason}\n`);
  process.exit(0);
}

/** The stand-in for the base image: that Debian release, minimal, with the Node running this script and its npm. */
function makeBaseImage(): void {
  if (imageExists(BASE_IMAGE)) return;
  if (process.versions.node.split('.')[0] !== BASE.line) {
    throw new Error(`the stand-in for ${BASE_IMAGE} needs Node ${BASE.line}, and this is Node ${process.versions.node}`);
  }
  const rootfs = join(work, 'rootfs');
  process.stdout.write(`Making the stand-in base image (debootstrap of Debian ${BASE.release}, about a minute)\n`);
  // debootstrap's own default mirror: no host is chosen here. Node's official build needs libatomic, which the
  // official images install too.
  execFileSync('debootstrap', ['--variant=minbase', '--include=libatomic1', BASE.release, rootfs], { stdio: 'ignore' });
  copyFileSync(process.execPath, join(rootfs, 'usr/local/bin/node'));
  mkdirSync(join(rootfs, 'usr/local/lib/node_modules'), { recursive: true });
  // The npm on PATH (its bin/npm-cli.js, behind whatever links lead to it), whichever Node's prefix it came with.
  const npmDir = join(realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim()), '../..');
  cpSync(npmDir, join(rootfs, 'usr/local/lib/node_modules/npm'), { recursive: true });
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
  // The image's builds reach the npm registry as this machine does, trusting the certificates it trusts.
  mkdirSync(join(rootfs, 'etc/ssl/certs'), { recursive: true });
  copyFileSync('/etc/ssl/certs/ca-certificates.crt', join(rootfs, 'etc/ssl/certs/ca-certificates.crt'));
  writeFileSync(join(rootfs, 'usr/local/etc/npmrc'), 'cafile=/etc/ssl/certs/ca-certificates.crt\n');
  // The official node images have a user "node" (uid and gid 1000) for images to run as.
  execFileSync('chroot', [
    rootfs,
    'sh',
    '-c',
    'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
  ]);
  const archive = join(work, 'rootfs.tar');
  execFileSync('tar', ['-C', rootfs, '-cf', archive, '.']);
  podman([
    'import',
    '--change',
    'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
    '--change',
    'CMD ["node"]',
    archive,
    BASE_IMAGE,
  ]);
  rmSync(rootfs, { recursive: true, force: true });
  rmSync(archive, { force: true });
}

function imageExists(name: string): boolean {
  return spawnSync('podman', ['--runtime', '/usr/sbin/runc', 'image', 'exists', name], { env: podmanEnv }).status === 0;
}

function imageSize(name: string): number {
  return Number(podman(['image', 'inspect', '--format', '{{.Size}}', name], { quiet: true }));
}

async function waitFor<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs: number): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  for (;;) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return { value, ms: performance.now() - started };
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Container {
  name: string;
  baseUrl: string;
}

async function runServer(name: string, volume: string, port: number, extra: string[] = []): Promise<Container & { healthyMs: number }> {
  const started = performance.now();
  // Each container has a host name of its own, as it would without --network=host.
  podman([
    'run',
    '--detach',
    '--name',
    name,
    '--hostname',
    name,
    '--network=host',
    '--env',
    `PORT=${port}`,
    '--volume',
    `${volume}:/data`,
    ...extra,
    IMAGE,
  ]);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor('/health answers', async () => ((await fetch(`${baseUrl}/health`)).ok ? true : undefined), 60_000);
  return { name, baseUrl, healthyMs: performance.now() - started };
}

/** Stops a container with SIGTERM (podman stop: SIGKILL only after 10 s) and says how long it took and how it ended. */
function stop(name: string): { ms: number; exitCode: number } {
  const started = performance.now();
  podman(['stop', '--time', '10', name], { quiet: true });
  const ms = performance.now() - started;
  const exitCode = Number(podman(['inspect', '--format', '{{.State.ExitCode}}', name], { quiet: true }));
  return { ms, exitCode };
}

/** The admin's session cookie, from signing in with the password the first start printed. */
let session = '';

async function api(baseUrl: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: { cookie: session, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function main(): Promise<void> {
  if (spawnSync('podman', ['--version']).status !== 0) skip('podman is not installed (apt-get install podman runc debootstrap)');
  if (!existsSync('/usr/sbin/runc')) skip('runc is not installed (apt-get install runc)');
  if (spawnSync('debootstrap', ['--version']).status !== 0 && !imageExists(BASE_IMAGE)) skip('debootstrap is not installed');
  const containers: string[] = [];
  const pods: string[] = [];
  const volume = `vexil-check-${process.pid}`;
  try {
    makeBaseImage();
    const building = performance.now();
    // Docker's image format: OCI's has no HEALTHCHECK.
    podman(['build', '--format', 'docker', '--network=host', '--tag', IMAGE, ROOT]);
    process.stdout.write(`Built ${IMAGE} in ${((performance.now() - building) / 1000).toFixed(0)} s\n`);
    const added = imageSize(IMAGE) - imageSize(BASE_IMAGE);
    check('the layers the Dockerfile adds to its base are at most 100 MB', added <= 100_000_000, `${(added / 1e6).toFixed(1)} MB`);

    podman(['volume', 'create', volume], { quiet: true });
    const port = await freePort();
    containers.push('vexil-check-1');
    const first = await runServer('vexil-check-1', volume, port, ['--read-only', '--tmpfs', '/tmp']);
    check(
      '/health answers on an empty volume, with a read-only root file system',
      true,
      `${(first.healthyMs / 1000).toFixed(1)} s from podman run`,
    );
    const health = spawnSync('podman', ['--runtime', '/usr/sbin/runc', 'healthcheck', 'run', first.name], { env: podmanEnv });
    check("the image's HEALTHCHECK passes", health.status === 0);
    const user = podman(['exec', first.name, 'id', '-u'], { quiet: true });
    check('the process runs as a user other than root', user !== '0', `uid ${user}`);
    const pid1 = podman(['exec', first.name, 'cat', '/proc/1/cmdline'], { quiet: true }).replaceAll('\0', ' ').trim();
    check('Node is process 1, with no shell in between, and __proto__ disabled', pid1 === 'node --disable-proto=throw dist/main.js', pid1);
    const printed = /as "([^"]+)" with the password (\S+)/.exec(podman(['logs', first.name], { quiet: true }));
    check('the first admin password is printed', printed !== null);
    const login = await fetch(`${first.baseUrl}/auth/simple/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: printed?.[1], password: printed?.[2] }),
    });
    session = (login.headers.getSetCookie()[0] ?? '').split(';')[0]!;
    check('the admin signs in with it', login.ok && session !== '', `${login.status}`);

    const project = 'default';
    const flag = `container-check-${Date.now()}`;
    const created = await api(first.baseUrl, 'POST', `/api/admin/projects/${project}/features`, { name: flag });
    const enabled = await api(first.baseUrl, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/on`);
    const strategy = await api(
      first.baseUrl,
      'POST',
      `/api/admin/projects/${project}/features/${flag}/environments/development/strategies`,
      {
        name: 'default',
      },
    );
    check(
      'a flag is made and turned on through the admin API',
      created.ok && enabled.ok && strategy.ok,
      `${created.status}, ${strategy.status}, ${enabled.status}`,
    );
    const tokenAnswer = await api(first.baseUrl, 'POST', '/api/admin/api-tokens', {
      tokenName: 'container-check',
      type: 'client',
      environment: 'development',
      projects: ['*'],
    });
    const clientToken = ((await tokenAnswer.json()) as { secret: string }).secret;
    const sdk = new Unleash({
      url: `${first.baseUrl}/api`,
      appName: 'container-check',
      customHeaders: { authorization: clientToken },
      disableMetrics: true,
    });
    await new Promise((resolve, reject) => {
      sdk.once('synchronized', resolve);
      sdk.once('error', reject);
    });
    check('the official Node SDK reads the flag as on', sdk.isEnabled(flag));
    sdk.destroy();

    // Writes go on while SIGTERM arrives: each one acknowledged must be there after the restart.
    const acknowledged: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let index = 0; writing && index < 2000; index++) {
        const name = `${flag}-write-${index}`;
        const answer = await api(first.baseUrl, 'POST', `/api/admin/projects/${project}/features`, { name }).catch(() => undefined);
        if (answer?.status === 201 || answer?.status === 200) acknowledged.push(name);
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const stopped = stop(first.name);
    writing = false;
    await writer;
    check(
      'SIGTERM stops the server within 10 s, exiting 0',
      stopped.ms < 10_000 && stopped.exitCode === 0,
      `${(stopped.ms / 1000).toFixed(1)} s, exit ${stopped.exitCode}`,
    );

    containers.push('vexil-check-2');
    const second = await runServer('vexil-check-2', volume, port);
    const features = (await (await api(second.baseUrl, 'GET', `/api/admin/projects/${project}/features`)).json()) as {
      features: Array<{ name: string }>;
    };
    const kept = new Set(features.features.map((feature) => feature.name));
    const lost = acknowledged.filter((name) => !kept.has(name));
    check('the flag is still there after a restart on the same volume', kept.has(flag));
    check(
      'no write acknowledged before SIGTERM is lost',
      acknowledged.length > 0 && lost.length === 0,
      `${acknowledged.length} acknowledged, ${lost.length} lost`,
    );
    check('the password is not printed again', !/with the password/.test(podman(['logs', second.name], { quiet: true })));

    const edgeToken = (
      (await (
        await api(second.baseUrl, 'POST', '/api/admin/api-tokens', {
          tokenName: 'edge',
          type: 'client',
          environment: 'development',
          projects: ['*'],
        })
      ).json()) as { secret: string }
    ).secret;
    const edgePort = await freePort();
    containers.push('vexil-check-edge');
    podman([
      'run',
      '--detach',
      '--name',
      'vexil-check-edge',
      '--network=host',
      '--read-only',
      '--env',
      `PORT=${edgePort}`,
      '--env',
      `UPSTREAM_URL=${second.baseUrl}`,
      '--env',
      `TOKENS=${edgeToken}`,
      IMAGE,
      'node',
      '--disable-proto=throw',
      'dist/edge/main.js',
    ]);
    const edgeFeatures = await waitFor(
      'the edge serves',
      async () => {
        const answer = await fetch(`http://127.0.0.1:${edgePort}/api/client/features`, { headers: { authorization: edgeToken } });
        return answer.ok ? ((await answer.json()) as { features: Array<{ name: string; enabled: boolean }> }) : undefined;
      },
      30_000,
    );
    check(
      'Vexil Edge from the same image serves the flag',
      edgeFeatures.value.features.some((feature) => feature.name === flag && feature.enabled),
    );
    const edgeHealth = spawnSync('podman', ['--runtime', '/usr/sbin/runc', 'healthcheck', 'run', 'vexil-check-edge'], { env: podmanEnv });
    check("the image's HEALTHCHECK passes for the edge", edgeHealth.status === 0);
    const edgeStopped = stop('vexil-check-edge');
    check(
      'SIGTERM stops the edge within 10 s, exiting 0',
      edgeStopped.ms < 10_000 && edgeStopped.exitCode === 0,
      `${(edgeStopped.ms / 1000).toFixed(1)} s`,
    );

    await checkEdgeMemory(second, containers);

    // `vexil refs scan` from the image, its grammars kept gzipped there, on a folder mounted read-only.
    const code = join(work, 'code');
    mkdirSync(code);
    writeFileSync(join(code, 'app.py'), 'client.is_enabled("image-python-flag")\n');
    writeFileSync(join(code, 'app.ts'), "unleash.isEnabled('image-ts-flag');\n");
    writeFileSync(join(code, 'app.dart'), "final on = unleash.isEnabled('image-dart-flag');\n");
    const scanned = podman(
      ['run', '--rm', '--read-only', '--volume', `${code}:/code:ro`, IMAGE, 'node', 'dist/cli/vexil.js', 'refs', 'scan', '/code', '--json'],
      {
        quiet: true,
        allowFailure: true,
      },
    );
    const flagsFound = scanned
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { flag: string }).flag)
      .sort();
    check(
      'vexil refs scan runs from the image',
      JSON.stringify(flagsFound) === JSON.stringify(['image-dart-flag', 'image-python-flag', 'image-ts-flag']),
      flagsFound.join(', '),
    );

    // `vexil refs cleanup` from the image: the patch on standard output, nothing written to the read-only folder.
    writeFileSync(join(code, 'gate.ts'), "if (unleash.isEnabled('image-cleanup-flag')) {\n  go();\n}\n");
    const cleanup = podman(
      [
        'run',
        '--rm',
        '--read-only',
        '--volume',
        `${code}:/code:ro`,
        IMAGE,
        'node',
        'dist/cli/vexil.js',
        'refs',
        'cleanup',
        'image-cleanup-flag',
        '--keep',
        'on',
        '/code',
      ],
      { quiet: true, allowFailure: true },
    );
    check(
      'vexil refs cleanup runs from the image',
      cleanup.includes("-if (unleash.isEnabled('image-cleanup-flag')) {\n-  go();\n-}\n+go();"),
      cleanup.slice(0, 200),
    );

    // A crash leaves the data directory's lock behind, written under the old container's host name.
    podman(['kill', '--signal', 'KILL', second.name], { quiet: true });
    containers.push('vexil-check-3');
    const third = await runServer('vexil-check-3', volume, port);
    const afterCrash = await api(third.baseUrl, 'GET', `/api/admin/projects/${project}/features/${flag}`);
    check(
      'a new container on the volume of one killed with SIGKILL starts and serves the data',
      afterCrash.ok,
      `healthy ${(third.healthyMs / 1000).toFixed(1)} s after podman run`,
    );
    await checkKubernetes(pods);
  } finally {
    for (const pod of pods) podman(['kube', 'down', pod], { quiet: true, allowFailure: true });
    for (const name of ['vexil']) podman(['secret', 'rm', name], { quiet: true, allowFailure: true });
    for (const name of containers) podman(['rm', '--force', name], { quiet: true, allowFailure: true });
    podman(['volume', 'rm', '--force', volume], { quiet: true, allowFailure: true });
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`${failures === 0 ? 'The container image passed every check' : `${failures} container image checks failed`}\n`);
  process.exit(failures === 0 ? 0 : 1);
}

/** The edge's container as the Kubernetes manifests run it: its command, and the environment they set by value. */
function edgeAsDeployed(): { command: string[]; env: Record<string, string> } {
  const manifest = parseAllDocuments(readFileSync(join(ROOT, 'deploy/kubernetes/base/edge.yaml'), 'utf8'))
    .map((document) => document.toJS())
    .find((resource) => resource.kind === 'Deployment') as {
    spec: { template: { spec: { containers: Array<{ command: string[]; env: Array<{ name: string; value?: string }> }> } } };
  };
  const container = manifest.spec.template.spec.containers[0]!;
  const env = Object.fromEntries(container.env.flatMap(({ name, value }) => (value === undefined ? [] : [[name, value]])));
  return { command: container.command, env };
}

const EDGE_MEMORY_FLAGS = 5000;
const EDGE_MEMORY_STREAMS = 1000;
const EDGE_MEMORY_LIMIT_MIB = 128;

/**
 * Vexil Edge inside Unleash Edge's published limit, as the manifests run it: a container given 128 MiB and no swap,
 * following a server that holds 5,000 flags, with 1,000 streams open and both SDK APIs under load at once. It must
 * not be killed, must keep answering, and its peak resident memory must leave headroom under the limit.
 */
async function checkEdgeMemory(server: Container, containers: string[]): Promise<void> {
  const names = Array.from({ length: EDGE_MEMORY_FLAGS }, (_, index) => `memory-check-${String(index).padStart(5, '0')}`);
  for (let from = 0; from < names.length; from += 1000) {
    const chunk = names.slice(from, from + 1000);
    const imported = await api(server.baseUrl, 'POST', '/api/admin/features-batch/import', {
      project: 'default',
      environment: 'development',
      data: {
        features: chunk.map((name) => ({ name, type: 'release' })),
        featureStrategies: chunk.map((name) => ({
          name: 'flexibleRollout',
          featureName: name,
          parameters: { rollout: '50', stickiness: 'default', groupId: name },
          constraints: [],
          segments: [],
        })),
        featureEnvironments: chunk.map((name) => ({ name, featureName: name, enabled: true })),
        tagTypes: [],
      },
    });
    if (!imported.ok) throw new Error(`the import of flags for the memory check answered ${imported.status}: ${await imported.text()}`);
  }
  const token = async (type: 'client' | 'frontend') =>
    (
      (await (
        await api(server.baseUrl, 'POST', '/api/admin/api-tokens', {
          tokenName: `memory-${type}`,
          type,
          environment: 'development',
          projects: ['*'],
        })
      ).json()) as { secret: string }
    ).secret;
  const [client, frontend] = [await token('client'), await token('frontend')];
  const port = await freePort();
  const name = 'vexil-check-edge-memory';
  containers.push(name);
  const deployed = edgeAsDeployed();
  // The manifests' backup volume is a disk, not memory: a folder of the host the container's user may write.
  const backup = join(work, 'edge-backup');
  mkdirSync(backup, { mode: 0o777 });
  chmodSync(backup, 0o777);
  podman([
    'run',
    '--detach',
    '--name',
    name,
    '--network=host',
    '--read-only',
    '--volume',
    `${backup}:/backup`,
    `--memory=${EDGE_MEMORY_LIMIT_MIB}m`,
    `--memory-swap=${EDGE_MEMORY_LIMIT_MIB}m`,
    ...Object.entries({ ...deployed.env, PORT: String(port), UPSTREAM_URL: server.baseUrl, TOKENS: client }).flatMap(([key, value]) => [
      '--env',
      `${key}=${value}`,
    ]),
    IMAGE,
    ...deployed.command,
  ]);
  const baseUrl = `http://127.0.0.1:${port}`;
  const held = await waitFor(
    'the edge limited to 128 MiB serves',
    async () => {
      const answer = await fetch(`${baseUrl}/api/client/features`, { headers: { authorization: client } });
      return answer.ok ? ((await answer.json()) as { features: unknown[] }).features.length : undefined;
    },
    60_000,
  );
  const sockets: Socket[] = [];
  const request = `GET /api/client/streaming HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${client}\r\nAccept: text/event-stream\r\n\r\n`;
  let connected = 0;
  for (let opened = 0; opened < EDGE_MEMORY_STREAMS; opened++) {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let greeted = false;
    socket.on('data', (chunk: Buffer) => {
      if (!greeted && chunk.includes('unleash-connected')) {
        greeted = true;
        connected++;
      }
    });
    socket.on('error', () => undefined);
    sockets.push(socket);
  }
  let user = 0;
  const load = (path: string, authorization: string, perRequest?: () => string) =>
    autocannon({
      url: `${baseUrl}${path}`,
      connections: 16,
      duration: 15,
      headers: { authorization },
      ...(perRequest ? { requests: [{ setupRequest: (next) => ({ ...next, path: perRequest() }) }] } : {}),
    });
  // The edge's anonymous memory (its heaps: what the kernel cannot drop, only kill for) sampled from the host while
  // the load runs. The container's cgroup also counts the file pages it read (Node's binary, the code), which the
  // kernel reclaims before it kills anything; its peak is shown beside.
  const hostPid = podman(['inspect', '--format', '{{.State.Pid}}', name], { quiet: true });
  let peakAnonymousMiB = 0;
  const sampler = setInterval(() => {
    try {
      const kiB = Number(/RssAnon:\s+(\d+)/.exec(readFileSync(`/proc/${hostPid}/status`, 'utf8'))?.[1]);
      peakAnonymousMiB = Math.max(peakAnonymousMiB, kiB / 1024);
    } catch {
      // The process is gone: the first check says so.
    }
  }, 50);
  const [frontendLoad, clientLoad] = await Promise.all([
    load('/api/frontend', frontend, () => `/api/frontend?userId=u${++user}`),
    load('/api/client/features', client),
  ]).finally(() => clearInterval(sampler));
  const cgroupPeakBytes = podman(
    ['exec', name, 'sh', '-c', 'cat /sys/fs/cgroup/memory.peak 2>/dev/null || cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes'],
    { quiet: true, allowFailure: true },
  );
  const stillAnswers = (await fetch(`${baseUrl}/internal-backstage/health`).catch(() => undefined))?.ok === true;
  for (const socket of sockets) socket.destroy();
  // cgroup v1 does not always tell podman of an OOM kill: a container that stopped running was killed.
  const killed = podman(['inspect', '--format', '{{.State.Running}} {{.State.OOMKilled}} {{.State.ExitCode}}', name], {
    quiet: true,
    allowFailure: true,
  });
  const errors = (result: autocannon.Result) => result.non2xx + result.errors + result.timeouts;
  check(
    `Vexil Edge in ${EDGE_MEMORY_LIMIT_MIB} MiB holding ${held.value.toLocaleString('en')} flags, ${EDGE_MEMORY_STREAMS.toLocaleString('en')} streams open and both SDK APIs under load: never killed, still answering`,
    killed.startsWith('true false') && stillAnswers && connected === EDGE_MEMORY_STREAMS && errors(frontendLoad) + errors(clientLoad) === 0,
    `${connected} streams greeted; frontend ${frontendLoad.requests.average.toFixed(0)} req/s, client features ${clientLoad.requests.average.toFixed(0)} req/s, ${errors(frontendLoad) + errors(clientLoad)} errors; running, OOM-killed, exit code: ${killed}`,
  );
  check(
    // 89 to 96 MiB from run to run (when V8 collects decides it): an eighth of the limit stays free in any.
    `its own memory at its peak leaves at least an eighth of the ${EDGE_MEMORY_LIMIT_MIB} MiB free`,
    peakAnonymousMiB > 0 && peakAnonymousMiB <= (EDGE_MEMORY_LIMIT_MIB * 7) / 8,
    `anonymous memory at most ${peakAnonymousMiB.toFixed(0)} MiB; the container's cgroup, file pages included, at most ${(Number(cgroupPeakBytes) / 2 ** 20).toFixed(0)} MiB`,
  );
  stop(name);

  // Given too little for the same flags, it says so and stops, rather than serving until the first busy minute.
  const small = 'vexil-check-edge-small';
  containers.push(small);
  podman(
    [
      'run',
      '--name',
      small,
      '--network=host',
      '--read-only',
      '--memory=96m',
      '--memory-swap=96m',
      ...Object.entries({
        ...deployed.env,
        PORT: String(await freePort()),
        UPSTREAM_URL: server.baseUrl,
        TOKENS: client,
        BACKUP_FOLDER: '',
      }).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
      IMAGE,
      ...deployed.command,
    ],
    { quiet: true, allowFailure: true },
  );
  const refused = podman(['inspect', '--format', '{{.State.ExitCode}}', small], { quiet: true, allowFailure: true });
  // What the container wrote to its standard error comes on podman's.
  const logs = spawnSync('podman', ['--runtime', '/usr/sbin/runc', 'logs', small], { env: podmanEnv, encoding: 'utf8' });
  const said = `${logs.stdout}${logs.stderr}`;
  check(
    'an edge given 96 MiB for the same flags stops at start and says what to change',
    refused === '1' && /cannot start: it holds [\d,]+ flags, .* raise the limit to \d+ MiB/.test(said),
    said.split('\n').find((line) => line.includes('cannot start')) ?? `exit code ${refused}`,
  );
}

/**
 * The Kubernetes manifests as an operator deploys them: the small overlay rendered by `kubectl kustomize`, its image
 * pointed at the one just built and its pods on the host's network (ports, a fresh database on the PostgreSQL at
 * 127.0.0.1:5432 as the external one, the edge's upstream), then played by `podman kube play` with the Secret they
 * reference made the way podman reads one. The server comes up on its probes' paths, and the edge serves its SDK
 * paths from it.
 */
async function checkKubernetes(pods: string[]): Promise<void> {
  if (spawnSync('kubectl', ['version', '--client']).status !== 0) {
    process.stdout.write('The Kubernetes manifests are not played: kubectl is not installed\n');
    return;
  }
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  try {
    await admin.connect();
  } catch {
    process.stdout.write('The Kubernetes manifests are not played: no PostgreSQL on 127.0.0.1:5432 to be the external database\n');
    return;
  }
  const database = `vexil_kube_${process.pid}`;
  await admin.query(`CREATE DATABASE ${database}`);
  try {
    const [serverPort, edgePort] = [await freePort(), await freePort()];
    const adminToken = '*:*.kubernetes-check-admin-token-0123456789';
    const overlay = join(work, 'overlay');
    mkdirSync(overlay);
    const env = (container: string, values: Record<string, string>) =>
      `      containers:\n        - name: ${container}\n          env:\n${Object.entries(values)
        .map(([name, value]) => `            - name: ${name}\n              value: "${value}"`)
        .join('\n')}`;
    // On the host's network a pod publishes no ports, so its probes name the port by number.
    const onHost = (deployment: string, container: string, port: number, probes: string[], values: Record<string, string>) =>
      [
        '  - target:',
        '      kind: Deployment',
        `      name: ${deployment}`,
        '    patch: |-',
        '      - op: add',
        '        path: /spec/template/spec/hostNetwork',
        '        value: true',
        '      - op: remove',
        '        path: /spec/template/spec/containers/0/ports',
        ...probes.flatMap((probe) => [
          '      - op: replace',
          `        path: /spec/template/spec/containers/0/${probe}/httpGet/port`,
          `        value: ${port}`,
        ]),
        '  - patch: |-',
        '      apiVersion: apps/v1',
        '      kind: Deployment',
        '      metadata:',
        `        name: ${deployment}`,
        '      spec:',
        '        template:',
        '          spec:',
        ...env(container, values)
          .split('\n')
          .map((line) => `      ${line}`),
      ].join('\n');
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      [
        'resources:',
        // kustomize takes only relative paths to what an overlay builds on.
        `  - ${relative(overlay, join(ROOT, 'deploy/kubernetes/overlays/small'))}`,
        'images:',
        '  - name: ghcr.io/vexil/vexil',
        '    newName: localhost/vexil',
        '    newTag: check',
        'patches:',
        onHost('vexil-server', 'vexil', serverPort, ['livenessProbe', 'readinessProbe', 'startupProbe'], {
          PORT: String(serverPort),
          HOST: '127.0.0.1',
        }),
        onHost('vexil-edge', 'edge', edgePort, ['livenessProbe', 'readinessProbe'], {
          PORT: String(edgePort),
          UPSTREAM_URL: `http://127.0.0.1:${serverPort}`,
        }),
      ].join('\n'),
    );
    const rendered = spawnSync('kubectl', ['kustomize', overlay], { encoding: 'utf8' });
    if (rendered.status !== 0) throw new Error(`kubectl kustomize: ${rendered.stderr}`);
    // podman plays Deployments (one replica each); the other kinds are for a cluster.
    const documents = rendered.stdout.split(/^---$/m).filter((document) => /^kind: Deployment$/m.test(document));
    const deploymentOf = (name: string) => documents.find((document) => new RegExp(`^  name: ${name}$`, 'm').test(document))!;
    // The Secret the manifests reference, as podman 4 reads one for kube play: its keys, each value in base64.
    const secret = (data: Record<string, string>) => {
      podman(['secret', 'rm', 'vexil'], { quiet: true, allowFailure: true });
      const file = join(work, 'secret.json');
      writeFileSync(
        file,
        JSON.stringify(Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]))),
      );
      podman(['secret', 'create', 'vexil', file], { quiet: true });
    };
    const play = (name: string, document: string) => {
      const file = join(work, `${name}.yaml`);
      writeFileSync(file, document);
      pods.push(file);
      podman(['kube', 'play', file], { quiet: true });
    };
    secret({ 'database-url': `postgres://postgres@127.0.0.1:5432/${database}`, 'admin-token': adminToken, 'edge-tokens': 'none' });
    play('server', deploymentOf('vexil-server'));
    const server = `http://127.0.0.1:${serverPort}`;
    await waitFor('the server in its pod answers /health', async () => ((await fetch(`${server}/health`)).ok ? true : undefined), 120_000);
    const probes = await Promise.all(['/health/live', '/ready'].map(async (path) => (await fetch(`${server}${path}`)).status));
    check(
      'the server played from the manifests answers its probes (liveness, readiness)',
      probes.every((status) => status === 200),
      probes.join(', '),
    );
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${server}${path}`, {
        method,
        headers: { authorization: adminToken, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const flag = `kube-check-${Date.now()}`;
    await call('POST', '/api/admin/projects/default/features', { name: flag });
    await call('POST', `/api/admin/projects/default/features/${flag}/environments/development/strategies`, { name: 'default' });
    await call('POST', `/api/admin/projects/default/features/${flag}/environments/development/on`);
    const token = (
      (await (
        await call('POST', '/api/admin/api-tokens', { tokenName: 'kube-edge', type: 'client', environment: 'development', projects: ['*'] })
      ).json()) as {
        secret: string;
      }
    ).secret;
    secret({ 'database-url': `postgres://postgres@127.0.0.1:5432/${database}`, 'admin-token': adminToken, 'edge-tokens': token });
    play('edge', deploymentOf('vexil-edge'));
    const edge = `http://127.0.0.1:${edgePort}`;
    const ready = await waitFor(
      'the edge in its pod is ready',
      async () => ((await fetch(`${edge}/internal-backstage/ready`)).ok ? true : undefined),
      60_000,
    );
    const served = (await (await fetch(`${edge}/api/client/features`, { headers: { authorization: token } })).json()) as {
      features: Array<{ name: string; enabled: boolean }>;
    };
    check(
      'the edge played from the manifests serves the flag from the server it points at',
      served.features.some((feature) => feature.name === flag && feature.enabled),
      `ready ${(ready.ms / 1000).toFixed(1)} s after kube play`,
    );
    const edgeContainer = podman(['ps', '--format', '{{.Names}}'], { quiet: true })
      .split('\n')
      .find((name) => name.startsWith('vexil-edge-pod') && name.endsWith('-edge'));
    const user = edgeContainer ? podman(['exec', edgeContainer, 'id', '-u'], { quiet: true, allowFailure: true }) : '(no edge container)';
    check('the edge pod runs as uid 1000, as the manifests say', user === '1000', user);
  } finally {
    for (const pod of pods.splice(0)) podman(['kube', 'down', pod], { quiet: true, allowFailure: true });
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

await main();
