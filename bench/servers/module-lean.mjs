// The module in the baseline's app, and nothing else: the baseline (`baseline.mjs`, the demo's Nest
// setup without the module) with `IdempotencyModule.forRoot()` imported and `@Idempotent()` on its
// POST /payments, whose body is the baseline's (insert the payment, read it back, return it)
// written through `IdempotencyTransaction`, the key's transaction, instead of a transaction of its
// own. Between this server and the baseline lies all the module costs; between it and the
// key-statements server (the ceiling), the module's own work in the server; between it and the
// module server (the demo app), what the demo carries besides.
import { setTimeout as sleep } from 'node:timers/promises';
import { serverEnv } from './common.mjs';
import { Payment, servePlainApp } from './plain-app.mjs';
import { Idempotent, IdempotencyModule, IdempotencyTransaction } from '../../dist/esm/index.js';

const { databaseUrl, latencyMs } = serverEnv();
let tx;

await servePlainApp(
  databaseUrl,
  async (_dataSource, dto, request) => {
    const payments = tx.manager.getRepository(Payment);
    const saved = await payments.save(payments.create({ ...dto, caller: request.user.id }));
    if (latencyMs > 0) await sleep(latencyMs);
    return payments.findOneByOrFail({ id: saved.id });
  },
  {
    imports: [IdempotencyModule.forRoot({ ttl: '24h', sweepInterval: 0 })],
    decorators: [Idempotent()],
    configure: (app) => void (tx = app.get(IdempotencyTransaction)),
  },
);
