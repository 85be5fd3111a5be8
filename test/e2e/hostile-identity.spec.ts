import { Controller, HostParam, Post, Query, Req, UseGuards } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { keyRows, paymentCount } from '../support/database.js';
import { newCaller, newKey, send, sendRawRequest } from '../support/http.js';
import { KeyHeaderController } from './key-header.controller.js';

// Bytes at the edges of a request's identity: query escapes that are not UTF-8, a Host of
// non-ASCII bytes, bytes around the key, a key list.

@Controller('hostile-transfers')
@UseGuards(BearerAuthGuard)
class QueryTransfersController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent()
  async transfer(@Query('payee') payee: string, @Req() request: AuthenticatedRequest): Promise<object> {
    const payments = this.tx.getRepository(Payment);
    const saved = await payments.save(payments.create({ caller: request.user.id, amount: 1, currency: 'EUR' }));
    return { payee, paymentId: saved.id };
  }
}

@Controller({ path: 'hostile-tenant-pay', host: ':tenant.example' })
@UseGuards(BearerAuthGuard)
class TenantController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent()
  async pay(@HostParam('tenant') tenant: string, @Req() request: AuthenticatedRequest): Promise<object> {
    const payments = this.tx.getRepository(Payment);
    await payments.save(payments.create({ caller: request.user.id, amount: 1, currency: 'EUR' }));
    return { tenantLength: tenant.length };
  }
}

const controllers = [QueryTransfersController, TenantController];

describe('query values the router hands over apart get fingerprints apart', () => {
  it.each([
    ['fastify (its default query parser)', 'fastify' as const, undefined],
    ['express with the extended query parser', 'express' as const, 'extended'],
  ])(
    "%s: another payee spelled with a non-UTF-8 escape under the same key is a 422, not the first payee's replay",
    async (_name, platform, parser) => {
      const lab = await appsOn(platform).startLab(
        {},
        {
          controllers,
          configure: parser
            ? (app) => (app as unknown as { set(name: string, value: string): void }).set('query parser', parser)
            : undefined,
        },
      );
      try {
        const [caller, key] = [newCaller(), newKey()];
        const first = await send(`${lab.url}/hostile-transfers?payee=Ren%E9`, { key, caller, body: {} });
        expect(first.status).toBe(201);
        expect(first.json.payee).toBe('Ren%E9');
        const other = await send(`${lab.url}/hostile-transfers?payee=Ren%EA`, { key, caller, body: {} });
        expect(other.headers['idempotent-replayed']).toBeUndefined();
        expect(other.status).toBe(422);
        expect(await paymentCount(caller)).toBe(1);
      } finally {
        await lab.close();
      }
    },
  );
});

describe.each(HTTP_PLATFORMS)("hostile bytes in a request's identity, on %s", (platform) => {
  let lab: RunningApp;
  beforeAll(async () => {
    lab = await appsOn(platform).startLab({}, { controllers: [...controllers, KeyHeaderController] });
  });
  afterAll(() => lab.close());

  it('a Host of 1,900 non-ASCII bytes on a host-routed controller: 414 endpoint-too-long, nothing run', async () => {
    const caller = newCaller();
    let tenant = '';
    let seed = 12345;
    for (let i = 0; i < 1900; i++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      tenant += String.fromCharCode(0xa0 + ((seed >> 16) % 96));
    }
    const answer = await sendRawRequest(
      lab.url,
      `POST /hostile-tenant-pay HTTP/1.1\r\nHost: ${tenant}.example\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${caller}\r\nIdempotency-Key: ${newKey()}\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expect(answer.status).toBe(414);
    expect(answer.text).toContain('urn:nestjs-pg-idempotency:endpoint-too-long');
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
  });

  it.each([
    ['after a bare key', (key: string) => `${key}\xa0`],
    ['before a bare key', (key: string) => `\xa0${key}`],
    ['after a quoted key', (key: string) => `"${key}"\xa0`],
  ])('a 0xA0 byte %s: 400 key-malformed, nothing stored', async (_case, spell) => {
    const caller = newCaller();
    const answer = await sendRawRequest(
      lab.url,
      `POST /hostile-transfers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${caller}\r\n` +
        `Idempotency-Key: ${spell(newKey())}\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('urn:nestjs-pg-idempotency:key-malformed');
    expect(await keyRows(caller)).toEqual([]);
  });

  it.each([
    ['two keys joined by a comma (two header lines a proxy merged)', 'order-1,order-2'],
    ['a list of two tokens, the first with a parameter', 'order-1;a=1,order-2'],
  ])('a printable-ascii route, %s: 400 key-malformed, nothing stored', async (_case, key) => {
    const caller = newCaller();
    const answer = await send(`${lab.url}/lab/printable`, { key, caller, body: {} });
    expect(answer.status).toBe(400);
    expect(answer.json?.type).toBe('urn:nestjs-pg-idempotency:key-malformed');
    expect(await keyRows(caller)).toEqual([]);
  });
});
