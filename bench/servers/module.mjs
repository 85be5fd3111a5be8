// The module under test: the built demo app (`POST /payments` with @Idempotent()), its sweeper
// schedule disabled; DEMO_TX=cls: the demo on @nestjs-cls/transactional; IDEMPOTENCY_KEY_STORAGE,
// IDEMPOTENCY_ENCRYPTION_KEYS and DEMO_REPLAY_CACHE as the demo reads them. The orchestrator can run
// one sweep on demand over the control channel.
import { serve, serverEnv } from './common.mjs';
import { createDemoApp } from '../../dist/esm/demo/create-demo-app.js';
import { demoConfigFromEnv } from '../../dist/esm/demo/demo.config.js';
import { IdempotencySweeper } from '../../dist/esm/index.js';

const { databaseUrl, latencyMs } = serverEnv();
const app = await createDemoApp(
  {
    ...demoConfigFromEnv({
      DEMO_TX: process.env.DEMO_TX,
      IDEMPOTENCY_KEY_STORAGE: process.env.IDEMPOTENCY_KEY_STORAGE,
      IDEMPOTENCY_ENCRYPTION_KEYS: process.env.IDEMPOTENCY_ENCRYPTION_KEYS,
      DEMO_REPLAY_CACHE: process.env.DEMO_REPLAY_CACHE,
    }),
    port: 0, databaseUrl, ttlSeconds: 86_400, sweepIntervalMs: 0, latencyMs },
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
