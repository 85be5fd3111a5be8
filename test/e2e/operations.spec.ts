import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { IdempotencyKeyConsole } from '../../src/index.js';
import { IdempotencyHealthIndicator } from '../../src/operations/terminus/index.js';
import { appsOn, databaseUrl, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { cli } from '../support/cli.js';
import { sql } from '../support/database.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';
import { PostgresProxy, throughProxy } from '../support/postgres-proxy.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly idempotency: IdempotencyHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.idempotency.isHealthy('idempotency', { maxSweepLagMs: 60_000 })]);
  }
}

@Module({ imports: [TerminusModule], controllers: [HealthController], providers: [IdempotencyHealthIndicator] })
class HealthModule {}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('the @nestjs/terminus health indicator', () => {
    it("is up with the sweeper's lag; down when the oldest expired row waits longer than the bound; down when the store cannot be reached", async () => {
      const proxy = new PostgresProxy();
      await proxy.start(new URL(databaseUrl()));
      const lab = await throughProxy(proxy, () => startLab({}, { imports: [HealthModule], problemFilter: false }));
      try {
        // Rows other suites left expired count too: sweep them first, as the sweeper would.
        await sql("DELETE FROM idempotency_keys WHERE expires_at <= now() - interval '30 seconds'");
        const up = await send(`${lab.url}/health`, { method: 'GET' });
        expect(up.status).toBe(200);
        expect(up.json.details.idempotency).toMatchObject({
          status: 'up',
          reachable: true,
          migrated: true,
          maxSweepLagMs: 60_000,
        });
        const caller = newCaller();
        await sql(
          `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_body, expires_at)
           VALUES ($1, $2, 'POST /health-lag', '\\x00', 'completed', 201, '\\x7b7d', now() - interval '2 minutes')`,
          [newKey(), caller],
        );
        const lagging = await send(`${lab.url}/health`, { method: 'GET' });
        expect(lagging.status).toBe(503);
        expect(lagging.json.details.idempotency.status).toBe('down');
        expect(lagging.json.details.idempotency.message).toContain('is the sweeper running?');
        expect(lagging.json.details.idempotency.sweepLagMs).toBeGreaterThan(60_000);
        await sql('DELETE FROM idempotency_keys WHERE caller = $1', [caller]);
        let unreachable: Awaited<ReturnType<typeof send>> | undefined;
        await proxy.outage(async () => (unreachable = await send(`${lab.url}/health`, { method: 'GET' })));
        expect(unreachable!.status).toBe(503);
        expect(unreachable!.json.details.idempotency).toMatchObject({ status: 'down', reachable: false });
      } finally {
        await lab.close();
        await proxy.stop();
      }
    });
  });

  describe('the key console service', () => {
    let lab: RunningApp;
    beforeAll(async () => {
      lab = await startLab();
    });
    afterAll(() => lab.close());

    it('looks a key up, counts it, expires it (its next request runs), and refuses a malformed key', async () => {
      const keys = lab.app.get(IdempotencyKeyConsole);
      const caller = newCaller();
      const key = newKey();
      await send(`${lab.url}/payments`, { key, caller, body: validPayment });
      const [row] = await keys.lookup({ caller, key });
      expect(row).toMatchObject({
        endpoint: 'POST /payments',
        state: 'completed',
        status: 201,
        expired: false,
        lockedUntil: null,
      });
      expect(row!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(
        (await keys.counts()).find((count) => count.state === 'completed' && !count.expired)!.rows,
      ).toBeGreaterThanOrEqual(1);
      expect(await keys.expire({ caller, key })).toMatchObject({ expired: true });
      const again = await send(`${lab.url}/payments`, { key, caller, body: validPayment });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      await expect(keys.lookup({ caller, key: 'has a space' })).rejects.toThrow(
        'a key is 1 to 255 printable ASCII characters',
      );
      expect(await keys.lookup({ caller, key: newKey() })).toEqual([]);
    });
  });
});

describe('npx nestjs-pg-idempotency keys (the CLI, spawned as a user runs it)', () => {
  const { startLab } = appsOn('express');
  let lab: RunningApp;
  let caller: string;
  let key: string;
  beforeAll(async () => {
    // No replay cache: the CLI runs in a process of its own, and an instance replays an outcome it
    // remembers until replayCache.maxAge; without one, the next request reads the table.
    lab = await startLab({ replayCache: false });
    caller = newCaller();
    key = newKey();
    await send(`${lab.url}/payments`, { key, caller, body: validPayment });
  });
  afterAll(() => lab.close());

  it("get: a table of the key's rows, or --json; 3 for no such key", async () => {
    const table = await cli(['keys', 'get', '--caller', caller, '--key', key]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ENDPOINT\s+STATE\s+STATUS\s+AGE\s+EXPIRES\s+FINGERPRINT\n-+/);
    expect(table.stdout).toMatch(/POST \/payments\s+completed\s+201\s/);
    const json = await cli(['keys', 'get', '--caller', caller, '--key', key, '--json']);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ endpoint: 'POST /payments', state: 'completed', status: 201 }),
    ]);
    const missing = await cli(['keys', 'get', '--caller', caller, '--key', newKey()]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('no row for key');
    const expireMissing = await cli(['keys', 'expire', '--caller', caller, '--key', newKey()]);
    expect(expireMissing.code).toBe(3);
    expect(expireMissing.stderr).toContain('no row for key');
  });

  it('count and in-progress print tables; expire makes the next request run', async () => {
    const count = await cli(['keys', 'count']);
    expect(count.code).toBe(0);
    expect(count.stdout).toMatch(/STATE\s+EXPIRED\s+ROWS/);
    const inProgress = await cli(['keys', 'in-progress', '--older-than', '10m', '--json']);
    expect(inProgress.code).toBe(0);
    expect(Array.isArray(JSON.parse(inProgress.stdout))).toBe(true);
    const expired = await cli(['keys', 'expire', '--caller', caller, '--key', key]);
    expect(expired.code).toBe(0);
    expect(expired.stdout).toContain('expired: the next request with this key runs');
    const again = await send(`${lab.url}/payments`, { key, caller, body: validPayment });
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await sql('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [caller])).toEqual([{ n: 2 }]);
  });

  it("get --digest on a table with digested keys: the endpoint's digest, or the name --endpoint gives it; expire by that name", async () => {
    const digested = await startLab({ replayCache: false, storage: { keys: 'digest' } });
    try {
      const digestCaller = newCaller();
      const digestKey = newKey();
      await send(`${digested.url}/payments`, { key: digestKey, caller: digestCaller, body: validPayment });
      const args = ['keys', 'get', '--digest', '--caller', digestCaller, '--key', digestKey, '--json'];
      const [unnamed] = JSON.parse((await cli(args)).stdout);
      expect(unnamed).toMatchObject({ endpoint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), status: 201 });
      const named = await cli([...args.slice(0, -1), '--endpoint', 'POST /payments']);
      expect(named.stdout).toMatch(/POST \/payments\s+completed\s+201\s/);
      const other = await cli([...args, '--endpoint', 'POST /refunds']);
      expect(other.code).toBe(3);
      const expired = await cli(['keys', 'expire', '--digest', '--caller', digestCaller, '--key', digestKey]);
      expect(expired.code).toBe(0);
      expect(expired.stdout).toContain('sha256:');
      const again = await send(`${digested.url}/payments`, {
        key: digestKey,
        caller: digestCaller,
        body: validPayment,
      });
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      const expiredByName = await cli([
        ...['keys', 'expire', '--digest', '--caller', digestCaller, '--key', digestKey],
        ...['--endpoint', 'POST /payments'],
      ]);
      expect(expiredByName.stdout).toMatch(/POST \/payments\s+completed \(expired\)\s+201\s/);
    } finally {
      await digested.close();
    }
  });

  it('bad input: a malformed key, a bad duration, an unknown command, no database, an unreachable one; each a message and a non-zero exit', async () => {
    const malformed = await cli(['keys', 'get', '--caller', caller, '--key', 'not a key']);
    expect(malformed).toMatchObject({ code: 2 });
    expect(malformed.stderr).toContain('a key is 1 to 255 printable ASCII characters');
    const duration = await cli(['keys', 'in-progress', '--older-than', 'soon']);
    expect(duration).toMatchObject({ code: 2 });
    expect(duration.stderr).toContain('--older-than takes a duration such as 30s');
    const unknown = await cli(['keys', 'delete']);
    expect(unknown).toMatchObject({ code: 2 });
    expect(unknown.stderr).toContain('unknown command: keys delete');
    const none = await cli(['keys', 'count'], { DATABASE_URL: '' });
    expect(none).toMatchObject({ code: 2 });
    expect(none.stderr).toContain('no database: set DATABASE_URL');
    const unreachable = await cli(['keys', 'count'], { DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/none' });
    expect(unreachable).toMatchObject({ code: 4 });
    expect(unreachable.stderr).toContain('cannot reach the database at postgres://postgres:***@127.0.0.1:1/none');
  });
});
