// Runs the real unleash-server from npm for a test (UNLEASH_PACKAGE: `unleash-server` for 7.x, `unleash-server-8`), on
// the PostgreSQL database named by UNLEASH_DATABASE_URL, on a free port; prints the port once it listens, and stops
// cleanly on SIGTERM.
const { start } = await import(process.env.UNLEASH_PACKAGE ?? 'unleash-server');

const url = new URL(process.env.UNLEASH_DATABASE_URL);
const instance = await start({
  db: {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
    ssl: false,
  },
  server: { port: 0, host: '127.0.0.1' },
  logLevel: 'error',
  authentication: {
    initApiTokens: [{ environment: '*', project: '*', secret: process.env.UNLEASH_ADMIN_TOKEN, type: 'admin', tokenName: 'vexil-test' }],
  },
});
process.stdout.write(`UNLEASH_LISTENING ${instance.server.address().port}\n`);
process.on('SIGTERM', async () => {
  await instance.stop();
  process.exit(0);
});
