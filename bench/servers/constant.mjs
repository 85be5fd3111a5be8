// The constant-body route: the demo's Nest stack without the module (the same ValidationPipe,
// problem filter, bearer guard and DTO as the baseline), whose POST /payments answers 201 with a
// payment of the demo's shape, built in memory: no statement, no await. What a replay costs
// beyond it is the module's (and Nest's interceptor path, which this route does not take).
// CONSTANT_INTERCEPTOR=pass: the route behind a global interceptor that only calls
// `next.handle()`, so that Nest's own cost of an interceptor is measured apart.
import { servePlainApp } from './plain-app.mjs';
import { serverEnv } from './common.mjs';

const { databaseUrl } = serverEnv();
const createdAt = new Date('2026-01-01T00:00:00.000Z');

const passThrough = { intercept: (_context, next) => next.handle() };

await servePlainApp(
  databaseUrl,
  (_dataSource, dto) => ({
    id: '0190c0de-0000-7000-8000-000000000001',
    amount: dto.amount,
    currency: dto.currency,
    createdAt,
  }),
  {
    configure:
      process.env.CONSTANT_INTERCEPTOR === 'pass' ? (app) => app.useGlobalInterceptors(passThrough) : undefined,
  },
);
