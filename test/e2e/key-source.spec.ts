import { randomUUID } from 'node:crypto';
import { Controller, Post } from '@nestjs/common';
import { Idempotent, type IdempotentRouteOptions } from '../../src/index.js';
import { appsOn, bootstrapFailure, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { paymentCount, sql } from '../support/database.js';
import { type Answer, newCaller, send } from '../support/http.js';
import { KeySourceController } from './key-source.controller.js';

/** The rows of one key, whoever its caller. */
function rowsOf(key: string): Promise<Array<{ caller: string; state: string; status: number | null }>> {
  return sql('SELECT caller, state, status FROM idempotency_keys WHERE key = $1 ORDER BY created_at', [key]);
}

/** A delivery as a provider sends it: no bearer token, its own headers. */
function deliver(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return send(url, { caller: null, body, headers });
}

const replayed = (answer: Answer) => answer.headers['idempotent-replayed'] === 'true';

describe.each(HTTP_PLATFORMS)(
  'a route that reads its key elsewhere (keyFrom) and names its caller, on %s',
  (platform) => {
    const { startLab } = appsOn(platform);
    let lab: RunningApp;
    beforeAll(async () => {
      lab = await startLab({}, { controllers: [KeySourceController] });
    });
    afterAll(() => lab?.close());

    describe('{ header: "X-Delivery-Id" }, caller "provider"', () => {
      it('a delivery sent 6 times, 5 at once and 1 late, with no bearer token: one payment, every delivery 200 with the same body', async () => {
        const [payer, id] = [newCaller(), randomUUID()];
        const delivery = { payer, amount: 12 };
        const url = `${lab.url}/sources/header`;
        const together = await Promise.all(
          Array.from({ length: 5 }, () => deliver(url, delivery, { 'x-delivery-id': id })),
        );
        const late = await deliver(url, delivery, { 'X-Delivery-Id': id, 'idempotency-key': randomUUID() });
        const answers = [...together, late];
        expect(answers.map(({ status }) => status)).toEqual([200, 200, 200, 200, 200, 200]);
        expect(answers.filter((answer) => !replayed(answer))).toHaveLength(1);
        expect(new Set(answers.map(({ text }) => text)).size).toBe(1);
        expect(replayed(late)).toBe(true);
        expect(await paymentCount(payer)).toBe(1);
        expect(await rowsOf(id)).toEqual([{ caller: 'provider', state: 'completed', status: 200 }]);
      });

      it('a delivery without the header is a 400 problem that names it, and nothing is written', async () => {
        const payer = newCaller();
        const answer = await deliver(
          `${lab.url}/sources/header`,
          { payer, amount: 1 },
          { 'idempotency-key': randomUUID() },
        );
        expect({ status: answer.status, type: answer.json?.type, detail: answer.json?.detail }).toEqual({
          status: 400,
          type: 'urn:nestjs-pg-idempotency:key-missing',
          detail: 'send the X-Delivery-Id header (printable ASCII characters) with this request',
        });
        expect(await paymentCount(payer)).toBe(0);
      });

      it('the header sent twice is a 400 problem that names it', async () => {
        const answer = await send(`${lab.url}/sources/header`, {
          caller: null,
          raw: '{}',
          headers: { 'x-delivery-id': ['a', 'b'] as never },
        });
        expect({ status: answer.status, detail: answer.json?.detail }).toEqual({
          status: 400,
          detail: 'several X-Delivery-Id headers were sent; send one',
        });
      });
    });

    describe('{ body: "event.id" }, caller "provider"', () => {
      it('an event delivered twice with other headers (a new signature): one payment, the second a replay', async () => {
        const [payer, id] = [newCaller(), `evt_${randomUUID().replace(/-/g, '')}`];
        const body = { event: { id, payer, amount: 30 } };
        const first = await deliver(`${lab.url}/sources/body`, body, { 'x-signature': 't=1' });
        const second = await deliver(`${lab.url}/sources/body`, body, { 'x-signature': 't=2' });
        expect([first.status, second.status, replayed(first), replayed(second)]).toEqual([200, 200, false, true]);
        expect(second.text).toBe(first.text);
        expect(await paymentCount(payer)).toBe(1);
        expect(await rowsOf(id)).toEqual([{ caller: 'provider', state: 'completed', status: 200 }]);
      });

      it("a redelivery whose body differs beside the event id (a delivery count) is replayed, not a 422: the route's fingerprint is the event id", async () => {
        const [payer, id] = [newCaller(), `evt_${randomUUID().replace(/-/g, '')}`];
        const first = await deliver(`${lab.url}/sources/body`, { event: { id, payer, amount: 31 }, pending: 2 });
        const again = await deliver(`${lab.url}/sources/body`, { event: { id, payer, amount: 31 }, pending: 1 });
        expect([first.status, again.status, replayed(again)]).toEqual([200, 200, true]);
        expect(again.text).toBe(first.text);
        expect(await paymentCount(payer)).toBe(1);
      });

      it.each([
        [
          'no event.id',
          { event: { payer: 'p', amount: 1 } },
          'key-missing',
          'send the key in the body field "event.id" (printable ASCII characters matching /evt_[A-Za-z0-9]+/) with this request',
        ],
        [
          'a number outside the format',
          { event: { id: 42, payer: 'p', amount: 1 } },
          'key-malformed',
          'the key in the body field "event.id" does not have the accepted format (printable ASCII characters matching /evt_[A-Za-z0-9]+/)',
        ],
        [
          'an empty event.id',
          { event: { id: '', payer: 'p', amount: 1 } },
          'key-malformed',
          'the key in the body field "event.id" is empty',
        ],
        [
          'an object',
          { event: { id: { nested: true }, payer: 'p', amount: 1 } },
          'key-malformed',
          'the key in the body field "event.id" must be printable ASCII text or a number',
        ],
        [
          'a key of 264 characters',
          { event: { id: `evt_${'a'.repeat(260)}`, payer: 'p', amount: 1 } },
          'key-malformed',
          'the key in the body field "event.id" is longer than 255 characters',
        ],
      ])('%s: a 400 problem that names the body field, and nothing is written', async (_, body, type, detail) => {
        const payer = newCaller();
        (body.event as { payer: string }).payer = payer;
        const answer = await deliver(`${lab.url}/sources/body`, body);
        expect({ status: answer.status, type: answer.json?.type, detail: answer.json?.detail }).toEqual({
          status: 400,
          type: `urn:nestjs-pg-idempotency:${type}`,
          detail,
        });
        expect(await paymentCount(payer)).toBe(0);
      });
    });

    describe('a function of the request, and a caller resolver of the route', () => {
      it('the same notification from one merchant runs once; from another merchant, once more (its own scope)', async () => {
        const payer = newCaller();
        const psp = randomUUID();
        const body = { psp, code: 'AUTHORISATION', payer, amount: 5 };
        const url = `${lab.url}/sources/function`;
        const a1 = await deliver(url, body, { 'x-merchant': 'merchant-a' });
        const a2 = await deliver(url, body, { 'x-merchant': 'merchant-a' });
        const b1 = await deliver(url, body, { 'x-merchant': 'merchant-b' });
        expect([a1.status, a2.status, b1.status]).toEqual([200, 200, 200]);
        expect([replayed(a1), replayed(a2), replayed(b1)]).toEqual([false, true, false]);
        expect(await paymentCount(payer)).toBe(2);
        expect((await rowsOf(`${psp}:AUTHORISATION`)).map(({ caller }) => caller).sort()).toEqual([
          'merchant-a',
          'merchant-b',
        ]);
      });

      it("a notification without the merchant header is refused 401 (the route's resolver found no caller), nothing written", async () => {
        const payer = newCaller();
        const answer = await deliver(`${lab.url}/sources/function`, { psp: randomUUID(), code: 'X', payer, amount: 5 });
        expect([answer.status, answer.json?.type]).toEqual([401, 'urn:nestjs-pg-idempotency:caller-unidentified']);
        expect(await paymentCount(payer)).toBe(0);
      });
    });

    it.each<[string, IdempotentRouteOptions, RegExp]>([
      ['a header name that is not a token', { keyFrom: { header: 'X Delivery' } }, /option "keyFrom" must be/],
      [
        'a header and a body field at once',
        { keyFrom: { header: 'X-Id', body: 'id' } as never },
        /option "keyFrom" must be/,
      ],
      ['an empty body path', { keyFrom: { body: 'event..id' } }, /option "keyFrom" must be/],
      ['an empty caller', { caller: '' }, /option "caller" must be a function or a caller's name/],
    ])('%s fails the bootstrap, naming the route and the option', async (_, options, message) => {
      @Controller('bad')
      class BadController {
        @Post()
        @Idempotent(options)
        handle(): object {
          return {};
        }
      }
      const failure = await bootstrapFailure(startLab({}, { controllers: [BadController] }));
      expect((failure as Error).name).toBe('IdempotencyConfigurationError');
      expect((failure as Error).message).toMatch(/@Idempotent\(\) on BadController\.handle/);
      expect((failure as Error).message).toMatch(message);
    });
  },
);
