/**
 * The floors of src/ (docs/ARCHITECTURE.md): main and cli → http, workers → domain → db → config → shared; edge
 * (Vexil Edge) → http, workers, domain, config, shared, never db.
 * An import runs down a floor or stays on its own, never up and never in a circle; a route file never imports
 * another route file. The web UI reaches the API through its query module only (web/src/api/queries.ts, which joins
 * the areas of web/src/api/areas). `npm test` runs this check.
 */
const floor = (name, path, mayImport) => ({
  name: `${name}-imports-down`,
  comment: `${name} may import only ${mayImport.join(', ')}`,
  severity: 'error',
  from: { path },
  to: { path: '^src/', pathNot: [path, ...mayImport.map((other) => FLOORS[other])] },
});

/**
 * The floors inside src/domain, lowest first. An area imports only areas on lower floors: never one on its own
 * floor or above, so no two areas import each other and no loop of areas can form. A new area is added here
 * (a test refuses an area that is on no floor).
 */
const DOMAIN_FLOORS = [
  ['access', 'metrics', 'impact-metrics'],
  ['events', 'usage'],
  [
    'settings',
    'environments',
    'context-fields',
    'strategies',
    'protected-environments',
    'api-tokens',
    'personal-access-tokens',
    'roles',
    'agent-authorization',
  ],
  ['features', 'users'],
  ['segments', 'tags', 'projects', 'release-plans', 'client-features', 'groups', 'signals', 'bootstrap', 'code-references'],
  ['change-requests', 'evaluation', 'addons', 'sign-in', 'scim'],
  ['flags-file', 'search', 'experiments'],
  ['features-batch', 'insights'],
  ['agents'],
];

const areaPath = (area) => `^src/domain/${area}/`;

const domainAreaRules = DOMAIN_FLOORS.flatMap((areas, floorIndex) => {
  const lower = DOMAIN_FLOORS.slice(0, floorIndex).flat();
  return areas.map((area) => ({
    name: `domain-${area}-imports-lower-floors`,
    comment: `${area} (floor ${floorIndex + 1} of src/domain) may import only ${lower.join(', ') || 'no other area'}`,
    severity: 'error',
    from: { path: areaPath(area) },
    to: { path: '^src/domain/', pathNot: [areaPath(area), ...lower.map(areaPath)] },
  }));
});

const FLOORS = {
  shared: '^src/shared/',
  // The process's set-up, which every floor may read: its configuration, and its telemetry.
  config: '^src/(config|telemetry)\\.ts$',
  db: '^src/db/',
  domain: '^src/domain/',
  workers: '^src/workers/',
  http: '^src/http/',
  edge: '^src/edge/',
};

module.exports = {
  forbidden: [
    floor('shared', FLOORS.shared, []),
    floor('config', FLOORS.config, ['shared']),
    floor('db', FLOORS.db, ['config', 'shared']),
    floor('domain', FLOORS.domain, ['db', 'config', 'shared']),
    floor('workers', FLOORS.workers, ['domain', 'db', 'config', 'shared']),
    floor('http', FLOORS.http, ['domain', 'db', 'config', 'shared']),
    // Vexil Edge stands beside the server on the floors below it, and never touches a database.
    floor('edge', FLOORS.edge, ['http', 'workers', 'domain', 'config', 'shared']),
    ...domainAreaRules,
    {
      name: 'no-circular',
      comment: 'Imports never form a circle.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'route-files-stand-alone',
      comment: 'A route file imports schemas and the domain, never another route file.',
      severity: 'error',
      from: { path: '^src/http/.+\\.routes\\.ts$' },
      to: { path: '^src/http/.+\\.routes\\.ts$' },
    },
    {
      name: 'faces-stand-apart',
      comment:
        'src/http is a room per face (admin-api, sdk-api, sign-in, mcp) over what they share (plugins and the files at its top): a face imports the shared part and no other face; what two faces need moves to the top.',
      severity: 'error',
      from: { path: '^src/http/(admin-api|sdk-api|sign-in|mcp)/' },
      to: { path: '^src/http/(admin-api|sdk-api|sign-in|mcp)/', pathNot: ['^src/http/$1/'] },
    },
    {
      name: 'edge-serves-the-sdk-face',
      comment:
        'Vexil Edge serves what SDKs read: of src/http it takes the SDK face and the shared plugins and declarations, nothing of the admin API, sign-in or MCP.',
      severity: 'error',
      from: { path: '^src/edge/' },
      to: {
        path: '^src/http/',
        pathNot: ['^src/http/(sdk-api|plugins)/', '^src/http/(deps|common\\.schemas|sdk\\.schemas|features\\.schemas)\\.ts$'],
      },
    },
    {
      name: 'client-code-stands-alone',
      comment:
        'src/client runs in applications (OpenFeature tracking): it imports nothing of the server, and nothing imports it but tests.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/client/' },
    },
    {
      name: 'nothing-runs-client-code',
      comment: 'The server and the edge do not import what applications run.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/client/' },
      to: { path: '^src/client/' },
    },
    {
      name: 'migrations-are-frozen',
      comment: 'A migration runs as it was written: it imports no live code of the project.',
      severity: 'error',
      from: { path: '^src/db/migrations/' },
      to: { path: '^src/' },
    },
    {
      name: 'ui-calls-the-api-through-queries',
      comment: 'Pages and components reach the API through web/src/api/queries.ts, never the client or an area module directly.',
      severity: 'error',
      from: { path: '^web/src/(pages|components)/' },
      to: { path: ['^web/src/api/client\\.ts$', '^web/src/api/areas/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
