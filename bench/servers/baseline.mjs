// The baseline: the demo's POST /payments handler body (validate, insert the payment, read it
// back, return it) in a plain dataSource.transaction(), with no idempotency.
import { setTimeout as sleep } from 'node:timers/promises';
import { serverEnv } from './common.mjs';
import { Payment, servePlainApp } from './plain-app.mjs';

const { databaseUrl, latencyMs } = serverEnv();

await servePlainApp(databaseUrl, (dataSource, dto, request) =>
  dataSource.transaction(async (manager) => {
    const payments = manager.getRepository(Payment);
    const saved = await payments.save(payments.create({ ...dto, caller: request.user.id }));
    if (latencyMs > 0) await sleep(latencyMs);
    return payments.findOneByOrFail({ id: saved.id });
  }),
);
