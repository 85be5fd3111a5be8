import {
  Body,
  type CanActivate,
  Controller,
  type ExecutionContext,
  HostParam,
  Inject,
  Injectable,
  Param,
  Post,
  Req,
  UseGuards,
} from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { keyRows, paymentCount } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { newCaller, newKey, send, sendRawRequest } from '../support/http.js';

/** What tells two requests apart besides the key: the host a controller routes by, the
 * controller an inherited handler is reached through, the parameters of one path segment, the
 * caller, and a body the module could not read. */

/** One path serving every tenant; the tenant comes from the host. */
@Controller({ path: 'tenant-pay', host: ':tenant.example' })
@UseGuards(BearerAuthGuard)
class TenantPaymentsController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent()
  async pay(@HostParam('tenant') tenant: string, @Req() request: AuthenticatedRequest): Promise<object> {
    const payments = this.tx.getRepository(Payment);
    const saved = await payments.save(payments.create({ caller: request.user.id, amount: 1, currency: 'EUR' }));
    return { tenant, paymentId: saved.id };
  }
}

/** A base controller whose handler two subclasses mark differently. */
abstract class ChargesBase {
  constructor(@Inject(IdempotencyTransaction) protected readonly tx: IdempotencyTransaction) {}

  @Post()
  async create(@Req() request: AuthenticatedRequest): Promise<object> {
    const payments = this.tx.getRepository(Payment);
    const saved = await payments.save(payments.create({ caller: request.user.id, amount: 7, currency: 'EUR' }));
    return { paymentId: saved.id };
  }
}

@Controller('charges-optional')
@UseGuards(BearerAuthGuard)
@Idempotent({ required: false })
class OptionalChargesController extends ChargesBase {}

@Controller('charges-strict')
@UseGuards(BearerAuthGuard)
@Idempotent()
class StrictChargesController extends ChargesBase {}

/** Two parameters in one segment. */
@Controller('transfers')
@UseGuards(BearerAuthGuard)
class TransfersController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post(':from-:to')
  @Idempotent()
  async transfer(
    @Param('from') from: string,
    @Param('to') to: string,
    @Req() request: AuthenticatedRequest,
  ): Promise<object> {
    const payments = this.tx.getRepository(Payment);
    const saved = await payments.save(payments.create({ caller: request.user.id, amount: 9, currency: 'EUR' }));
    return { from, to, paymentId: saved.id };
  }
}

/** A parameter named in another script. */
@Controller('accounts')
@UseGuards(BearerAuthGuard)
class AccountsController {
  @Post(':счёт/transfers')
  @Idempotent()
  transfer(@Param('счёт') account: string): object {
    return { account };
  }
}

/** An optional group after a parameter, in its segment (Express 5's syntax). */
@Controller('docs')
@UseGuards(BearerAuthGuard)
class DocsController {
  @Post(':name{.:ext}')
  @Idempotent()
  convert(@Param('name') name: string, @Param('ext') ext?: string): object {
    return { name, ext: ext ?? null };
  }
}

/** An id object with a `toString()` of its own, as MongoDB's ObjectId. */
class ObjectIdLike {
  constructor(private readonly hex: string) {}

  toString(): string {
    return this.hex;
  }
}

/** Sets `request.user.id` to an ObjectId-like object made from the bearer token. */
@Injectable()
class ObjectIdGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    request.user = { id: new ObjectIdLike(String(request.headers.authorization).slice('Bearer '.length)) };
    return true;
  }
}

@Controller('object-id')
@UseGuards(ObjectIdGuard)
class ObjectIdController {
  @Post()
  @Idempotent()
  pay(): object {
    return { paid: true };
  }
}

/** `POST /echo` with an empty chunked body and no Content-Type, over a raw connection: the status and the answer. */
function postEmptyChunked(url: string, caller: string, key: string): Promise<{ status: number; text: string }> {
  return sendRawRequest(
    url,
    `POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${caller}\r\nIdempotency-Key: ${key}\r\n` +
      'Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  );
}

/** Answers the body it was given. */
@Controller('echo')
@UseGuards(BearerAuthGuard)
class EchoController {
  @Post()
  @Idempotent()
  echo(@Body() body: unknown): object {
    return { body: body ?? null };
  }
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);
  let lab: RunningApp;

  beforeAll(async () => {
    lab = await startLab(
      {},
      {
        controllers: [
          TenantPaymentsController,
          OptionalChargesController,
          StrictChargesController,
          TransfersController,
          AccountsController,
          EchoController,
          ObjectIdController,
        ],
      },
    );
  });
  afterAll(() => lab.close());

  it("a controller routed by host: the same caller, key and body on another host is another request, not the first host's replay", async () => {
    const caller = newCaller();
    const key = newKey();
    const acme = await send(`${lab.url}/tenant-pay`, { key, caller, body: {}, headers: { host: 'acme.example' } });
    const globex = await send(`${lab.url}/tenant-pay`, { key, caller, body: {}, headers: { host: 'globex.example' } });
    const acmeAgain = await send(`${lab.url}/tenant-pay`, {
      key,
      caller,
      body: {},
      headers: { host: 'ACME.example:8443' },
    });
    expect([acme.status, globex.status, acmeAgain.status]).toEqual([201, 201, 201]);
    expect([acme.json.tenant, globex.json.tenant]).toEqual(['acme', 'globex']);
    expect([globex.headers['idempotent-replayed'], acmeAgain.headers['idempotent-replayed']]).toEqual([
      undefined,
      'true',
    ]);
    expect(acmeAgain.body.equals(acme.body)).toBe(true);
    expect(await paymentCount(caller)).toBe(2);
    expect((await keyRows(caller)).map((row) => row.endpoint).sort()).toEqual([
      'POST acme.example/tenant-pay',
      'POST globex.example/tenant-pay',
    ]);
  });

  it('an inherited handler keeps the settings of the controller it is reached through', async () => {
    const caller = newCaller();
    expect((await send(`${lab.url}/charges-optional`, { caller, body: {} })).status).toBe(201);
    const strict = await send(`${lab.url}/charges-strict`, { caller, body: {} });
    expect(strict.status).toBe(400);
    expect(strict.json.type).toBe('urn:nestjs-pg-idempotency:key-missing');
    expect(await paymentCount(caller)).toBe(1);
  });

  it('two parameters in one segment: other values are another scope, whichever way the router splits them', async () => {
    const caller = newCaller();
    const key = newKey();
    const first = await send(`${lab.url}/transfers/A-B%2DC`, { key, caller, body: {} });
    const other = await send(`${lab.url}/transfers/A-B-C`, { key, caller, body: {} });
    expect([first.status, other.status]).toEqual([201, 201]);
    if (platform === 'express') {
      // Express splits at the first "-" of the path as sent: ("A", "B-C"), then ("A-B", "C").
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(other.json).toMatchObject({ from: 'A-B', to: 'C' });
      expect(await paymentCount(caller)).toBe(2);
    } else {
      // Fastify decodes first: both are ("A-B", "C"), one request.
      expect(other.headers['idempotent-replayed']).toBe('true');
      expect(await paymentCount(caller)).toBe(1);
    }
  });

  it('an empty chunked body is no body to the module, as Content-Length: 0 is: never a body-not-parsed', async () => {
    const caller = newCaller();
    const answer = await postEmptyChunked(lab.url, caller, newKey());
    expect(answer.text).not.toContain('body-not-parsed');
    // Fastify itself refuses a chunked request without a Content-Type (415) before any route.
    expect(answer.status).toBe(platform === 'express' ? 201 : 415);
    expect(await keyRows(caller)).toHaveLength(platform === 'express' ? 1 : 0);
  });

  it('the default caller: a user id object with its own toString() (an ObjectId) scopes by its text', async () => {
    const [alice, bob] = [newCaller(), newCaller()];
    const key = newKey();
    const first = await send(`${lab.url}/object-id`, { key, caller: alice, body: {} });
    const other = await send(`${lab.url}/object-id`, { key, caller: bob, body: {} });
    expect([first.status, other.status]).toEqual([201, 201]);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect((await keyRows(alice)).map((row) => row.key)).toEqual([key]);
  });

  it('a parameter named in another script is part of the scope: another account is another request', async () => {
    const caller = newCaller();
    const key = newKey();
    const a = await send(`${lab.url}/accounts/A-111/transfers`, { key, caller, body: {} });
    const b = await send(`${lab.url}/accounts/B-222/transfers`, { key, caller, body: {} });
    expect([a.json, b.json]).toEqual([{ account: 'A-111' }, { account: 'B-222' }]);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect((await keyRows(caller)).map((row) => row.endpoint).sort()).toEqual([
      'POST /accounts/A-111/transfers',
      'POST /accounts/B-222/transfers',
    ]);
  });

  it('a body no parser read (text/plain on Express) is refused with 415 body-not-parsed, nothing stored; a parsed one is fingerprinted', async () => {
    const caller = newCaller();
    const key = newKey();
    const text = (raw: string) =>
      send(`${lab.url}/echo`, { key, caller, raw, headers: { 'content-type': 'text/plain' } });
    const first = await text('amount=10');
    const second = await text('amount=9999');
    if (platform === 'express') {
      expect([first.status, second.status]).toEqual([415, 415]);
      expect(first.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(first.json.type).toBe('urn:nestjs-pg-idempotency:body-not-parsed');
      expect(await keyRows(caller)).toEqual([]);
    } else {
      // Fastify parses text/plain: the second payload is another request under the same key.
      expect([first.status, second.status]).toEqual([201, 422]);
      expect(first.json).toEqual({ body: 'amount=10' });
    }
    const empty = await send(`${lab.url}/echo`, { key: newKey(), caller, headers: { 'content-type': 'text/plain' } });
    expect(empty.status).toBe(201);
  });
});

describe('an optional group after a parameter, in its segment (express)', () => {
  const { startLab } = appsOn('express');

  it('name "report.tar" with ext "gz", and name "report.tar.gz" with none, are two requests', async () => {
    const lab = await startLab({}, { controllers: [DocsController] });
    try {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/docs/report.tar.gz`, { key, caller, body: {} });
      const second = await send(`${lab.url}/docs/report%2Etar%2Egz`, { key, caller, body: {} });
      expect([first.json, second.json]).toEqual([
        { name: 'report.tar', ext: 'gz' },
        { name: 'report.tar.gz', ext: null },
      ]);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(await keyRows(caller)).toHaveLength(2);
    } finally {
      await lab.close();
    }
  });
});

describe.each(HTTP_PLATFORMS)('caller ids on %s', (platform) => {
  const { startLab } = appsOn(platform);

  it.each([
    ['an object (request.user)', (request: { user: unknown }) => request.user],
    ['NaN', () => Number.NaN],
  ])(
    "a caller resolver returning %s fails the request with a 500: no run, no row, never another caller's replay",
    async (_case, caller) => {
      const lab = await startLab({ caller: caller as never }, { controllers: [LabController] });
      try {
        const [alice, mallory] = [newCaller(), newCaller()];
        const key = newKey();
        const first = await send(`${lab.url}/lab/scoped`, { key, caller: alice, body: {} });
        const other = await send(`${lab.url}/lab/scoped`, { key, caller: mallory, body: {} });
        expect([first.status, other.status]).toEqual([500, 500]);
        expect([await paymentCount(alice), await paymentCount(mallory)]).toEqual([0, 0]);
        expect([...(await keyRows(alice)), ...(await keyRows(mallory))]).toEqual([]);
      } finally {
        await lab.close();
      }
    },
  );
});
