import { paymentCount } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { CommitCounter } from '../support/commit-counter.subscriber.js';
import { newCaller, newKey, send } from '../support/http.js';
import { sentQueries } from '../support/sent-queries.js';
import { LabController } from '../support/common-routes.controller.js';
import { FailurePolicyController } from './failure-policy.controller.js';
import { RoundTripsController } from './round-trips.controller.js';

const countRoundTrips = async (run: () => Promise<unknown>): Promise<number> => (await sentQueries(run)).length;

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('round trips and the key transaction', () => {
    let lab: RunningApp;
    beforeAll(
      async () =>
        (lab = await startLab({}, { controllers: [LabController, RoundTripsController, FailurePolicyController] })),
    );
    afterAll(() => lab.close());

    it('an executed request costs no more round trips than the same handler in a plain transaction', async () => {
      const caller = newCaller();
      // Warm both routes up (connections, metadata).
      await send(`${lab.url}/lab/plain`, { caller, body: {} });
      await send(`${lab.url}/lab/twin`, { key: newKey(), caller, body: {} });
      const baseline = await countRoundTrips(() => send(`${lab.url}/lab/plain`, { caller, body: {} }));
      const key = newKey();
      const executed = await countRoundTrips(() => send(`${lab.url}/lab/twin`, { key, caller, body: {} }));
      const replayed = await countRoundTrips(() => send(`${lab.url}/lab/twin`, { key, caller, body: {} }));
      expect(baseline).toBe(4); // START TRANSACTION, INSERT, SELECT, COMMIT
      expect(executed).toBe(baseline);
      expect(replayed).toBe(0);
      expect(await paymentCount(caller)).toBe(4);
    });

    it('sends its statements prepared (EXECUTE) by default', async () => {
      const sent = await sentQueries(() =>
        send(`${lab.url}/lab/twin`, { key: newKey(), caller: newCaller(), body: {} }),
      );
      expect(sent.filter((text) => /EXECUTE nestjs_pg_idempotency_/.test(text))).toHaveLength(2);
    });

    it('nested manager.transaction() inside a handler uses a savepoint within the key transaction', async () => {
      const caller = newCaller();
      const key = newKey();
      const answer = await send(`${lab.url}/lab/nested`, { key, caller, body: {} });
      expect(answer.status).toBe(201);
      expect(answer.json).toEqual({ failed: 'inner failure' });
      expect(await paymentCount(caller)).toBe(1);
    });

    it('TypeORM subscribers hear the key transaction commit', async () => {
      const before = CommitCounter.commits;
      await send(`${lab.url}/lab/twin`, { key: newKey(), caller: newCaller(), body: {} });
      expect(CommitCounter.commits).toBe(before + 1);
    });

    it("TypeORM subscribers hear a rollback, not a commit, when a thrown 4xx rolled the handler's writes back (its answer is recorded)", async () => {
      const before = { commits: CommitCounter.commits, rollbacks: CommitCounter.rollbacks };
      const caller = newCaller();
      const answer = await send(`${lab.url}/lab/reject-after-write`, { key: newKey(), caller, body: {} });
      expect(answer.status).toBe(422);
      expect(await paymentCount(caller)).toBe(0);
      expect({ commits: CommitCounter.commits, rollbacks: CommitCounter.rollbacks }).toEqual({
        commits: before.commits,
        rollbacks: before.rollbacks + 1,
      });
    });
  });

  describe('preparedStatements: false (behind a pooler in transaction mode)', () => {
    it('sends the statements whole, in as many round trips, and behaves the same', async () => {
      const lab = await startLab({ preparedStatements: false, replayCache: false }, { controllers: [LabController] });
      try {
        const caller = newCaller();
        const key = newKey();
        await send(`${lab.url}/lab/twin`, { key: newKey(), caller, body: {} });
        const sent = await sentQueries(() => send(`${lab.url}/lab/twin`, { key, caller, body: {} }));
        expect(sent).toHaveLength(4);
        expect(sent.some((text) => /PREPARE|EXECUTE/.test(text))).toBe(false);
        const replay = await send(`${lab.url}/lab/twin`, { key, caller, body: {} });
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(await paymentCount(caller)).toBe(2);
      } finally {
        await lab.close();
      }
    });
  });
});
