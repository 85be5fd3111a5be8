// An app on Drizzle ORM over a node-postgres Pool, with no TypeORM at all, as a process of its
// own: IdempotencyModule.forRoot({ pool }), and the payment written through IdempotentDrizzle.
// A resolve hook refuses `typeorm` and `@nestjs/typeorm` before anything else loads, so the app
// proves the module needs neither. Routes: POST /payments ({ amount, currency }; the demo's:
// DEMO_LATENCY_MS inside the handler, a 402 once written from 1,000,000 up) and POST /scenario/pay
// ({ amount }; a 402 from 1,000,000 up, a 500 once written with `x-fail: after-write`).
// The bearer token is the caller. Prints "listening on <url>" once it listens (HTTP_PLATFORM:
// express or fastify). Decorators are applied by hand (plain JavaScript).
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if (/^(?:typeorm|@nestjs\\/typeorm)(?:\\/|$)/.test(specifier)) throw new Error('this app must not load ' + specifier);
  return next(specifier, context);
}`),
);

await import('reflect-metadata');
const {
  Body,
  Controller,
  HttpException,
  Headers,
  Inject,
  InternalServerErrorException,
  Module,
  Post,
  Req,
  UnauthorizedException,
} = await import('@nestjs/common');
const { NestFactory } = await import('@nestjs/core');
const { default: pg } = await import('pg');
const { eq } = await import('drizzle-orm');
const { drizzle } = await import('drizzle-orm/node-postgres');
const { payments } = await import('../../dist/esm/demo/payments/payments.table.js');
const { Idempotent, IdempotencyModule } = await import('nestjs-pg-idempotency');
const { IdempotentDrizzle } = await import('nestjs-pg-idempotency/drizzle');
const { decorate } = await import('../support/decorate.mjs');

const schema = { payments };
const DECLINED_FROM = 1_000_000;
const latencyMs = Number(process.env.DEMO_LATENCY_MS ?? 0);

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const db = drizzle({ client: pool, schema });
const DRIZZLE = new IdempotentDrizzle(db, { schema });

function callerOf(request) {
  const id = caller(request);
  if (!id) throw new UnauthorizedException('send Authorization: Bearer <token>');
  return id;
}

async function write(caller, amount, currency) {
  const [{ id }] = await DRIZZLE.db
    .insert(payments)
    .values({ caller, amount, currency })
    .returning({ id: payments.id });
  return id;
}

async function read(id) {
  const [payment] = await DRIZZLE.db
    .select({ id: payments.id, amount: payments.amount, currency: payments.currency, createdAt: payments.createdAt })
    .from(payments)
    .where(eq(payments.id, id));
  return payment;
}

class PaymentsController {
  async create(body, request) {
    const id = await write(callerOf(request), body.amount, body.currency);
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    if (body.amount >= DECLINED_FROM) throw new HttpException('the card was declined', 402);
    return read(id);
  }
}
Controller('payments')(PaymentsController);
decorate(PaymentsController, 'create', [Post(), Idempotent()], [Body(), Req()]);

class ScenarioController {
  async pay(body, request, fail) {
    const id = await write(callerOf(request), body.amount, 'EUR');
    if (fail === 'after-write') throw new InternalServerErrorException('failed after its write');
    if (body.amount >= DECLINED_FROM) throw new HttpException('declined', 402);
    return read(id);
  }
}
Controller('scenario')(ScenarioController);
decorate(ScenarioController, 'pay', [Post('pay'), Idempotent()], [Body(), Req(), Headers('x-fail')]);

class AppModule {}
const caller = (request) => /^Bearer ([\x21-\x7e]{1,200})$/.exec(request.headers.authorization ?? '')?.[1];
Module({
  imports: [IdempotencyModule.forRoot({ pool, sweepInterval: 0, caller })],
  controllers: [PaymentsController, ScenarioController],
})(AppModule);

const platform =
  process.env.HTTP_PLATFORM === 'fastify' ? new (await import('@nestjs/platform-fastify')).FastifyAdapter() : undefined;
const options = { logger: ['error'] };
const app = await (platform
  ? NestFactory.create(AppModule, platform, options)
  : NestFactory.create(AppModule, options));
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
process.once('SIGTERM', () => void pool.end());
console.log(`listening on http://127.0.0.1:${app.getHttpServer().address().port}`);
