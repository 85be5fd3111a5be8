import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import { Registry } from 'prom-client';
import {
  type IdempotencyGauges,
  IdempotencyGaugesReader,
  IdempotencyService,
  type OutboxPublisher,
} from '../../src/index.js';
import { appsOn, type RunningApp } from '../support/apps.js';
import { cli } from '../support/cli.js';
import { emptyDatabase } from '../support/database.js';
import { newKey, send, validPayment } from '../support/http.js';

const RULES = 'alerts/idempotency.rules.yml';

/** The metric names the rules read (recording rules' own names, with a colon, left out). */
function metricsTheRulesRead(): string[] {
  // A metric in an expression is followed by its selector, its range or a space (a table's name in
  // a description, by a dot).
  return [...new Set(readFileSync(RULES, 'utf8').match(/\bidempotency_[a-z_]+(?=[{[\s)])/g))].sort();
}

/** promtool, when it is installed (Debian's `prometheus` package); `.ci/run` installs it. */
async function promtool(): Promise<string | undefined> {
  for (const path of ['/usr/bin/promtool', '/usr/local/bin/promtool']) {
    const found = await promisify(execFile)(path, ['--version']).then(
      () => path,
      () => undefined,
    );
    if (found) return found;
  }
  if (process.env.CI === 'true') throw new Error('CI=true and promtool is not installed: apt-get install prometheus');
  process.stdout.write('promtool is not installed: the alert rules are not tested (apt-get install prometheus)\n');
  return undefined;
}

describe('the alert rules shipped in alerts/', () => {
  it('promtool checks them and passes their unit tests (each alert fires on series shaped as exported, silent below its bound)', async () => {
    const tool = await promtool();
    if (!tool) return;
    const checked = await promisify(execFile)(tool, ['check', 'rules', RULES]);
    expect(checked.stdout).toContain('SUCCESS: 9 rules found');
    const tested = await promisify(execFile)(tool, ['test', 'rules', 'alerts/idempotency.rules.test.yml']);
    expect(tested.stdout).toContain('SUCCESS');
  });

  it('read only metrics the module registers', async () => {
    const { startLab } = appsOn('express');
    const registry = new Registry();
    const lab = await startLab({ metrics: { registry } });
    try {
      const registered = (await registry.getMetricsAsJSON()).map((metric) => metric.name);
      expect(metricsTheRulesRead().filter((name) => !registered.includes(name))).toEqual([]);
    } finally {
      await lab.close();
    }
  });
});

describe('the gauges the alerts read, and the refusals they count', () => {
  const { startLab } = appsOn('express');
  let database: { url: string; drop(): Promise<void> };
  let client: pg.Client;
  let lab: RunningApp;
  const registry = new Registry();
  const publisher: OutboxPublisher = { publish: async () => undefined };
  beforeAll(async () => {
    database = await emptyDatabase('gauges');
    expect(await cli(['migrate', '--outbox'], { DATABASE_URL: database.url })).toMatchObject({ code: 0 });
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    lab = await startLab(
      { metrics: { registry }, checkTables: false, outbox: { publishers: { rabbit: publisher }, relay: false } },
      { databaseUrl: database.url },
    );
  });
  afterAll(async () => {
    await lab.close();
    await client.end();
    await database.drop();
  });
  const gauge = async (name: string) =>
    (await registry.getSingleMetric(name)!.get()).values.map((sample) => sample.value)[0];

  it('read(): the sweeper lag, the oldest key held here, the outbox backlog; and the Prometheus gauges', async () => {
    await client.query(
      `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_body, expires_at)
       VALUES ('old', 'c', 'POST /seeded', '\\x00', 'completed', 201, '\\x7b7d', now() - interval '300 seconds')`,
    );
    await client.query(
      `INSERT INTO idempotency_outbox (message_id, publisher, destination, ordering_key, payload, created_at)
       VALUES ('m1', 'rabbit', 'orders', 'k', '\\x7b7d', now() - interval '120 seconds')`,
    );
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const held = lab.app.get(IdempotencyService).run({ scope: 'gauges', key: 'held-1' }, () => {
      entered();
      return new Promise<void>((resolve) => (release = resolve));
    });
    await inside;
    let read: IdempotencyGauges;
    try {
      read = await lab.app.get(IdempotencyGaugesReader).read();
    } finally {
      release();
    }
    expect(await held).toMatchObject({ kind: 'executed' });
    expect(read.sweepLagMs).toBeGreaterThanOrEqual(300_000);
    expect(read.sweepLagMs).toBeLessThan(330_000);
    expect(read.oldestInFlightMs).toBeGreaterThan(0);
    expect(read.outbox).toEqual({ unsent: 1, oldestMs: expect.any(Number) });
    expect(read.outbox!.oldestMs).toBeGreaterThanOrEqual(120_000);
    expect(await gauge('idempotency_sweep_lag_seconds')).toBeGreaterThanOrEqual(300);
    expect(await gauge('idempotency_outbox_unsent_messages')).toBe(1);
    expect(await gauge('idempotency_outbox_oldest_unsent_seconds')).toBeGreaterThanOrEqual(120);
    expect(await gauge('idempotency_oldest_in_flight_seconds')).toBeGreaterThan(0);
    // Nothing held any more: the next read says so.
    expect((await lab.app.get(IdempotencyGaugesReader).read()).oldestInFlightMs).toBe(0);
  });

  it('idempotency_refused_total counts a key refused for a missing table, by route and reason', async () => {
    await client.query('ALTER TABLE idempotency_keys RENAME TO idempotency_keys_away');
    try {
      const answer = await send(`${lab.url}/payments`, { key: newKey(), caller: 'gauges', body: validPayment });
      expect(answer.status).toBe(500);
    } finally {
      await client.query('ALTER TABLE idempotency_keys_away RENAME TO idempotency_keys');
    }
    const refused = (await registry.getSingleMetric('idempotency_refused_total')!.get()).values;
    expect(refused).toEqual([{ labels: { handler: 'PaymentsController.create', reason: 'not-migrated' }, value: 1 }]);
  });
});

describe('the sweeper lag on the key table partitioned by expiry', () => {
  const { startLab } = appsOn('express');
  it("is read from the bounds of the module's partitions: none wholly past, 0; one that ended eight hours ago, eight hours (one of the app's own is not the sweeper's)", async () => {
    const database = await emptyDatabase('gauges_partitioned');
    const client = new pg.Client({ connectionString: database.url });
    let lab: RunningApp | undefined;
    try {
      expect(await cli(['migrate', '--partitioned'], { DATABASE_URL: database.url })).toMatchObject({ code: 0 });
      await client.connect();
      lab = await startLab({}, { databaseUrl: database.url });
      const reader = lab.app.get(IdempotencyGaugesReader);
      expect((await reader.read()).sweepLagMs).toBe(0);
      // One of the app's own, past: not the sweeper's, never dropped by it, so not its lag.
      const hour = 3_600_000;
      const start = Math.floor(Date.now() / 1000) * 1000 - 10 * hour; // before the partitions the module made
      await client.query(
        `CREATE TABLE idempotency_keys_legacy PARTITION OF idempotency_keys FOR VALUES FROM ('${new Date(start).toISOString()}') TO ('${new Date(start + hour).toISOString()}')`,
      );
      expect((await reader.read()).sweepLagMs).toBe(0);
      // One named as the module names its own, that ended eight hours ago.
      const own = `idempotency_keys_p${new Date(start + hour).toISOString().replace(/[-:]/g, '').replace('T', 't').slice(0, 15)}`;
      await client.query(
        `CREATE TABLE ${own} PARTITION OF idempotency_keys FOR VALUES FROM ('${new Date(start + hour).toISOString()}') TO ('${new Date(start + 2 * hour).toISOString()}')`,
      );
      const { sweepLagMs } = await reader.read();
      expect(sweepLagMs).toBeGreaterThanOrEqual(8 * hour);
      expect(sweepLagMs).toBeLessThan(8 * hour + 60_000);
    } finally {
      await lab?.close();
      await client.end();
      await database.drop();
    }
  });
});
