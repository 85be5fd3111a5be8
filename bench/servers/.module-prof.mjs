import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { serve, serverEnv } from './common.mjs';
import { createDemoApp } from '../../dist/esm/demo/create-demo-app.js';
import { demoConfigFromEnv } from '../../dist/esm/demo/demo.config.js';
const { databaseUrl, latencyMs } = serverEnv();
const app = await createDemoApp({ ...demoConfigFromEnv({ DEMO_TX: process.env.DEMO_TX }), port: 0, databaseUrl, ttlSeconds: 86_400, sweepIntervalMs: 0, latencyMs }, { quiet: true });
const session = new Session(); session.connect();
await serve(app, {
  async profStart() { await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 100 }); await session.post('Profiler.start'); return {}; },
  async profStop({ file }) { const { profile } = await session.post('Profiler.stop'); writeFileSync(file, JSON.stringify(profile)); return {}; },
});
