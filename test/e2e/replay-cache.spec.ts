import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import type { IdempotencyModuleOptions } from '../../src/index.js';
import {
  appsOn,
  databaseUrl,
  HTTP_PLATFORMS,
  type HttpPlatform,
  type RunningApp,
  startLab as startLabOn,
} from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { newCaller, newKey, send } from '../support/http.js';
import { ExpiryController } from './expiry-sweeper.controller.js';

/** A lab app whose idempotency store uses its own DataSource, which the test can cut off. */
async function labWithOwnStore(
  platform: HttpPlatform,
  options: IdempotencyModuleOptions = {},
): Promise<{ lab: RunningApp; cut: () => Promise<void> }> {
  const dataSource = await new DataSource({ type: 'postgres', url: databaseUrl() }).initialize();
  const lab = await startLabOn({ ...options, dataSource }, { platform, controllers: [LabController] });
  return { lab, cut: () => dataSource.destroy() };
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('the in-process cache of completed outcomes', () => {
    it('replays (and refuses another payload with 422) from memory, without the database', async () => {
      const { lab, cut } = await labWithOwnStore(platform);
      try {
        const caller = newCaller();
        const key = newKey();
        const first = await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 1 } });
        await cut();
        const replay = await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 1 } });
        expect(replay.status).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body.equals(first.body)).toBe(true);
        expect((await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 2 } })).status).toBe(422);
        // A key this instance never saw needs the database, which is gone.
        expect((await send(`${lab.url}/lab/narrow`, { key: newKey(), caller, body: { amount: 1 } })).status).toBe(503);
      } finally {
        await lab.close();
      }
    });

    it('honours expiry: past the ttl the key runs again', async () => {
      const lab = await startLab({}, { controllers: [ExpiryController] });
      try {
        const caller = newCaller();
        const key = newKey();
        const first = await send(`${lab.url}/lab/short-ttl`, { key, caller, body: {} });
        await sleep(1_100);
        const after = await send(`${lab.url}/lab/short-ttl`, { key, caller, body: {} });
        expect(after.headers['idempotent-replayed']).toBeUndefined();
        expect(after.json.id).not.toBe(first.json.id);
      } finally {
        await lab.close();
      }
    });

    it('is bounded: the least recently used outcome is evicted first', async () => {
      const { lab, cut } = await labWithOwnStore(platform, { replayCache: { maxEntries: 2 } });
      try {
        const caller = newCaller();
        const keys = [newKey(), newKey(), newKey()];
        for (const key of keys) await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 1 } });
        await cut();
        const statuses = [];
        for (const key of keys)
          statuses.push((await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 1 } })).status);
        expect(statuses).toEqual([503, 201, 201]);
      } finally {
        await lab.close();
      }
    });

    it('can be turned off (replayCache: false): every replay reads the database', async () => {
      const { lab, cut } = await labWithOwnStore(platform, { replayCache: false });
      try {
        const caller = newCaller();
        const key = newKey();
        await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 1 } });
        await cut();
        expect((await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 1 } })).status).toBe(503);
      } finally {
        await lab.close();
      }
    });
  });
});
