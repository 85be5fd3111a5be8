import { paymentCount, until } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { type Answer, newCaller, newKey, send } from '../support/http.js';
import { entered, release } from '../support/latch.js';
import { watchQueries } from '../support/sent-queries.js';
import { WaitModeController } from './wait-mode.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('wait mode (route option wait)', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [WaitModeController] })));
    afterAll(() => lab.close());

    it('50 concurrent duplicates wait for the first and all get its replay: one execution, no 409', async () => {
      const caller = newCaller();
      const key = newKey();
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => send(`${lab.url}/lab/waiting`, { key, caller, body: {} })),
      );
      const executed = answers.filter((a) => !a.headers['idempotent-replayed']);
      expect(answers.map((a) => a.status)).toEqual(Array(50).fill(201));
      expect(executed).toHaveLength(1);
      expect(answers.every((a) => a.body.equals(executed[0].body))).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('across instances too: a duplicate sent to another app instance waits and replays', async () => {
      const other = await startLab({}, { controllers: [WaitModeController] });
      try {
        const caller = newCaller();
        const key = newKey();
        const first = send(`${lab.url}/lab/waiting-held`, { key, caller, body: {} });
        await entered(caller);
        // The first is held in its handler: only the duplicate's lookups of the key go out now.
        const lookups = watchQueries();
        let duplicate: Answer;
        try {
          const answer = send(`${other.url}/lab/waiting-held`, { key, caller, body: {} });
          // It found the key in progress and asked again: it waits.
          await until(async () => lookups.count(key) >= 2, 'the duplicate asking twice');
          release(caller);
          duplicate = await answer;
        } finally {
          lookups.stop();
        }
        expect(duplicate.status).toBe(201);
        expect(duplicate.headers['idempotent-replayed']).toBe('true');
        expect(duplicate.body.equals((await first).body)).toBe(true);
        expect(await paymentCount(caller)).toBe(1);
      } finally {
        await other.close();
      }
    });

    it('past its bound a duplicate gets the 409', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = send(`${lab.url}/lab/waiting-briefly`, { key, caller, body: {} });
      await entered(caller);
      const duplicate = await send(`${lab.url}/lab/waiting-briefly`, { key, caller, body: {} });
      expect(duplicate.status).toBe(409);
      release(caller);
      expect((await first).status).toBe(201);
    });

    it('in lease mode, past its bound the 409 carries the seconds left on the lease, as without waiting', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = send(`${lab.url}/lab/waiting-lease`, { key, caller, body: {} });
      await entered(caller);
      const duplicate = await send(`${lab.url}/lab/waiting-lease`, { key, caller, body: {} });
      expect(duplicate.status).toBe(409);
      expect(Number(duplicate.headers['retry-after'])).toBeGreaterThanOrEqual(19);
      release(caller);
      expect((await first).status).toBe(201);
    });
  });
});
