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
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Unleash } from 'unleash-client';
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
  } finally {
    for (const name of containers) podman(['rm', '--force', name], { quiet: true, allowFailure: true });
    podman(['volume', 'rm', '--force', volume], { quiet: true, allowFailure: true });
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`${failures === 0 ? 'The container image passed every check' : `${failures} container image checks failed`}\n`);
  process.exit(failures === 0 ? 0 : 1);
}

await main();
