import { Body, Controller, InternalServerErrorException, Post, Req, UseGuards } from '@nestjs/common';
import { keyLockHolders, keyRows, paymentCount } from '../support/database.js';
import { Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { appsOn, PLATFORMS_AND_DEMO_HOSTS, PLATFORMS_AND_HOSTS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { entered, hold, release } from '../support/latch.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';

describe.each(PLATFORMS_AND_DEMO_HOSTS)(
  'concurrent requests (demo API, 300 ms inside the payment handler), on %s, %s',
  (platform, host) => {
    const { startDemo } = appsOn(platform, host);
    let demo: RunningApp;
    beforeAll(async () => (demo = await startDemo({ latencyMs: 300 })));
    afterAll(async () => {
      await demo.close();
    });

    it('50 at once with one key: exactly one execution; the rest 409 with an integer Retry-After, or a replay', async () => {
      const caller = newCaller();
      const key = newKey();
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => send(`${demo.url}/payments`, { key, caller, body: validPayment })),
      );
      const executed = answers.filter((a) => a.status === 201 && !a.headers['idempotent-replayed']);
      const conflicts = answers.filter((a) => a.status === 409);
      const replays = answers.filter((a) => a.headers['idempotent-replayed'] === 'true');
      expect(executed).toHaveLength(1);
      expect(conflicts.length + replays.length).toBe(49);
      expect(conflicts.length).toBeGreaterThan(0);
      for (const conflict of conflicts) {
        expect(conflict.headers['retry-after']).toMatch(/^[1-9]\d*$/);
        expect(conflict.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(conflict.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:key-in-use', status: 409 });
      }
      for (const replay of replays) expect(replay.body.equals(executed[0].body)).toBe(true);
      expect(await paymentCount(caller)).toBe(1);

      const after = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      expect(after.headers['idempotent-replayed']).toBe('true');
      expect(after.body.equals(executed[0].body)).toBe(true);
    });

    it('50 at once with distinct keys: 50 executions, no false 409', async () => {
      const caller = newCaller();
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => send(`${demo.url}/payments`, { key: newKey(), caller, body: validPayment })),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(50).fill(201));
      expect(answers.every((a) => !a.headers['idempotent-replayed'])).toBe(true);
      expect(await paymentCount(caller)).toBe(50);
      expect(await keyRows(caller)).toHaveLength(50);
    });

    it('replays of a completed key running at once all replay (no 409)', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      const answers = await Promise.all(
        Array.from({ length: 30 }, () => send(`${demo.url}/payments`, { key, caller, body: validPayment })),
      );
      expect(answers.every((a) => a.status === 201 && a.headers['idempotent-replayed'] === 'true')).toBe(true);
      expect(answers.every((a) => a.body.equals(first.body))).toBe(true);
    });
  },
);

describe.each(PLATFORMS_AND_HOSTS)('on %s, %s', (platform, host) => {
  const { startLab } = appsOn(platform, host);

  describe('replays read from the database (no replay cache)', () => {
    it('30 replays of a completed key at once all replay, byte for byte, with no 409', async () => {
      const lab = await startLab({ replayCache: false }, { controllers: [LabController] });
      try {
        const caller = newCaller();
        const key = newKey();
        const first = await send(`${lab.url}/lab/twin`, { key, caller, body: {} });
        expect(first.status).toBe(201);
        const answers = await Promise.all(
          Array.from({ length: 30 }, () => send(`${lab.url}/lab/twin`, { key, caller, body: {} })),
        );
        expect(answers.map((a) => `${a.status} ${a.headers['idempotent-replayed']}`)).toEqual(
          Array(30).fill('201 true'),
        );
        expect(answers.every((a) => a.body.equals(first.body))).toBe(true);
        expect(await paymentCount(caller)).toBe(1);
      } finally {
        await lab.close();
      }
    });
  });

  describe('two app instances with separate pools on one database', () => {
    it('20 keys × 10 duplicates spread over both: exactly 20 executions, the rest 409 or byte-identical replays', async () => {
      const [a, b] = [await startLab({}, { latencyMs: 200 }), await startLab({}, { latencyMs: 200 })];
      try {
        const caller = newCaller();
        const keys = Array.from({ length: 20 }, () => newKey());
        const answers = await Promise.all(
          keys.flatMap((key, k) =>
            Array.from({ length: 10 }, (_, i) =>
              send(`${(k + i) % 2 ? a.url : b.url}/payments`, { key, caller, body: validPayment }).then((answer) => ({
                key,
                answer,
              })),
            ),
          ),
        );
        const executed = answers.filter(
          ({ answer }) => answer.status === 201 && !answer.headers['idempotent-replayed'],
        );
        expect(executed.map(({ key }) => key).sort()).toEqual([...keys].sort());
        for (const { key, answer } of answers) {
          if (answer === executed.find((e) => e.key === key)!.answer) continue;
          if (answer.status === 409) continue;
          expect(answer.headers['idempotent-replayed']).toBe('true');
          expect(answer.body.equals(executed.find((e) => e.key === key)!.answer.body)).toBe(true);
        }
        expect(await paymentCount(caller)).toBe(20);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  describe('a storm of duplicates', () => {
    it('does not starve requests for other keys of pool connections', async () => {
      // The storm's holder keeps its key and its connection (lab/held-write) until every
      // other-key request has answered; /lab/scoped is instant. The pool has 20 connections.
      const lab = await startLab({}, { controllers: [LabController] });
      try {
        const stormCaller = newCaller();
        const key = newKey();
        const storm = Array.from({ length: 200 }, () =>
          send(`${lab.url}/lab/held-write`, { key, caller: stormCaller, body: {} }),
        );
        await entered(stormCaller);
        const caller = newCaller();
        const others = await Promise.all(
          Array.from({ length: 20 }, () => send(`${lab.url}/lab/scoped`, { key: newKey(), caller, body: {} })),
        );
        // Every other-key request finished while the storm's holder still held its key.
        expect(await keyLockHolders(key, stormCaller, 'POST /lab/held-write')).toBe(1);
        release(stormCaller);
        const stormAnswers = await Promise.all(storm);
        expect(others.map((a) => a.status)).toEqual(Array(20).fill(201));
        expect(stormAnswers.filter((a) => a.status >= 500)).toEqual([]);
        expect(stormAnswers.filter((a) => a.status === 201 && !a.headers['idempotent-replayed'])).toHaveLength(1);
        expect(await paymentCount(caller)).toBe(20);
        expect(await paymentCount(stormCaller)).toBe(1);
      } finally {
        await lab.close();
      }
    });
  });
});

@Controller('in-flight')
@UseGuards(BearerAuthGuard)
class InFlightController {
  /** Holds until the test releases the caller's latch, then a 500 when asked: the key is released, nothing recorded. */
  @Post()
  @Idempotent()
  async held(@Body() body: { fail?: boolean }, @Req() request: AuthenticatedRequest): Promise<object> {
    await hold(request.user.id);
    if (body.fail) throw new InternalServerErrorException();
    return body;
  }
}

describe.each(PLATFORMS_AND_HOSTS)('another payload while a transaction holds the key, on %s, %s', (platform, host) => {
  const { startLab } = appsOn(platform, host);
  let a: RunningApp;
  let b: RunningApp;
  beforeAll(async () => {
    a = await startLab({}, { controllers: [InFlightController] });
    b = await startLab({}, { controllers: [InFlightController] });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('gets 409 on the holding instance as on any other (not a 422 for a key that may never be spent); once the holder failed, it runs', async () => {
    const [caller, key] = [newCaller(), newKey()];
    const first = send(`${a.url}/in-flight`, { key, caller, body: { fail: true } });
    await entered(caller);
    const [onA, onB] = await Promise.all(
      [a, b].map((app) => send(`${app.url}/in-flight`, { key, caller, body: { n: 2 } })),
    );
    expect([onA.status, onB.status]).toEqual([409, 409]);
    release(caller);
    expect((await first).status).toBe(500);
    const after = await send(`${a.url}/in-flight`, { key, caller, body: { n: 2 } });
    expect([after.status, after.headers['idempotent-replayed']]).toEqual([201, undefined]);
  });
});
