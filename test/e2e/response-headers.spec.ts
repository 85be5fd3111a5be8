import { Body, Controller, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { keyRows, paymentCount } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import type { HeaderSetter } from '../support/platform-response.js';
import { newCaller, newKey, send } from '../support/http.js';

/** Headers that describe the stored bytes, and the headers of an answer that is withdrawn. */

@Controller('headers')
@UseGuards(BearerAuthGuard)
class HeadersController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /** Relays an upstream answer that came gzip-encoded, as a gateway does. */
  @Post('relay')
  @Idempotent()
  relay(@Res({ passthrough: true }) response: { raw?: ServerResponse } & ServerResponse): void {
    const raw = response.raw ?? response;
    raw.writeHead(201, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'Content-Language': 'de' });
    raw.end(gzipSync(JSON.stringify({ charged: 1250, provider: 'acme' })));
  }

  /** Writes a payment, names it in a cookie and a file name, and answers more than 256 bytes when asked. */
  @Post('receipt')
  @Idempotent({ maxResponseBytes: 256 })
  async receipt(
    @Req() request: AuthenticatedRequest,
    @Body() body: { lines: number },
    @Res({ passthrough: true }) response: HeaderSetter,
  ): Promise<object> {
    const payments = this.tx.getRepository(Payment);
    const payment = await payments.save(payments.create({ caller: request.user.id, amount: 100, currency: 'EUR' }));
    response.header('Set-Cookie', `last_payment=${payment.id}; Path=/`);
    response.header('Content-Disposition', `attachment; filename="receipt-${payment.id}.json"`);
    return { paymentId: payment.id, lines: Array.from({ length: body.lines }, (_, n) => `line ${n}`) };
  }
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);
  let lab: RunningApp;
  beforeAll(async () => (lab = await startLab({}, { controllers: [HeadersController] })));
  afterAll(() => lab.close());

  it('a gzip-encoded answer is replayed with its Content-Encoding (and Content-Language): the replay decodes as the first did', async () => {
    const caller = newCaller();
    const key = newKey();
    const first = await send(`${lab.url}/headers/relay`, { key, caller, body: {} });
    const replay = await send(`${lab.url}/headers/relay`, { key, caller, body: {} });
    expect(JSON.parse(gunzipSync(first.body).toString())).toEqual({ charged: 1250, provider: 'acme' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.equals(first.body)).toBe(true);
    expect([replay.headers['content-encoding'], replay.headers['content-language']]).toEqual(['gzip', 'de']);
  });

  it('a recorded answer keeps its Content-Disposition on replays, never its Set-Cookie', async () => {
    const caller = newCaller();
    const key = newKey();
    const first = await send(`${lab.url}/headers/receipt`, { key, caller, body: { lines: 1 } });
    const replay = await send(`${lab.url}/headers/receipt`, { key, caller, body: { lines: 1 } });
    expect(first.status).toBe(201);
    expect(replay.headers['content-disposition']).toBe(`attachment; filename="receipt-${first.json.paymentId}.json"`);
    expect(replay.headers['set-cookie']).toBeUndefined();
  });

  it("a withdrawn answer's headers do not go out with the problem that replaces it", async () => {
    const caller = newCaller();
    const refused = await send(`${lab.url}/headers/receipt`, { key: newKey(), caller, body: { lines: 100 } });
    expect(refused.status).toBe(500);
    expect(refused.json.type).toBe('urn:nestjs-pg-idempotency:response-too-large');
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
    expect([refused.headers['set-cookie'], refused.headers['content-disposition']]).toEqual([undefined, undefined]);
  });
});
