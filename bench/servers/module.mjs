// The module under test: the built demo app (`POST /payments` with @Idempotent()), its sweeper
// schedule disabled; DEMO_TX=cls: the demo on @nestjs-cls/transactional; IDEMPOTENCY_KEY_STORAGE,
// IDEMPOTENCY_ENCRYPTION_KEYS and DEMO_REPLAY_CACHE as the demo reads them. The orchestrator can run
// one sweep on demand over the control channel. MODULE_DIST: another build's dist/ folder (the
// previous commit's, for a same-run comparison), instead of this checkout's.
import { pathToFileURL } from 'node:url';
import { serve, serverEnv } from './common.mjs';

const dist = process.env.MODULE_DIST
  ? pathToFileURL(`${process.env.MODULE_DIST.replace(/\/$/, '')}/`)
  : new URL('../../dist/', import.meta.url);
const { createDemoApp } = await import(new URL('esm/demo/create-demo-app.js', dist).href);
const { demoConfigFromEnv } = await import(new URL('esm/demo/demo.config.js', dist).href);
const { IdempotencySweeper } = await import(new URL('esm/index.js', dist).href);

const { databaseUrl, latencyMs } = serverEnv();
const app = await createDemoApp(
  {
    ...demoConfigFromEnv({
      DEMO_TX: process.env.DEMO_TX,
      IDEMPOTENCY_KEY_STORAGE: process.env.IDEMPOTENCY_KEY_STORAGE,
      IDEMPOTENCY_ENCRYPTION_KEYS: process.env.IDEMPOTENCY_ENCRYPTION_KEYS,
      DEMO_REPLAY_CACHE: process.env.DEMO_REPLAY_CACHE,
    }),
    port: 0,
    databaseUrl,
    ttlSeconds: 86_400,
    sweepIntervalMs: 0,
    latencyMs,
  },
  { quiet: true },
);

await serve(app, {
  /** One full sweep (all batches), timed here, next to the database calls it makes. */
  async sweep() {
    const started = process.hrtime.bigint();
    const result = await app.get(IdempotencySweeper, { strict: false }).sweep();
    return { ...result, ms: Number(process.hrtime.bigint() - started) / 1e6 };
  },
});
