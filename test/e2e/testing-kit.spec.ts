import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DECLINED_FROM_AMOUNT } from '../../src/demo/payments/payments.controller.js';
import { checkIdempotentRoute, type ConformanceTarget, IdempotencyConformanceError } from '../../src/testing/index.js';
import { appsOn, DEMO_HOSTS, type RunningApp } from '../support/apps.js';
import { paymentCount } from '../support/database.js';
import { validPayment } from '../support/http.js';
import { OutsideTheKeyController } from './testing-kit.controller.js';

/** A payment route as the kit's user describes it: the run id is the bearer token, so the caller of its rows. */
const paymentsAt = (url: string): ConformanceTarget => ({
  url,
  request: (run) => ({ headers: { authorization: `Bearer ${run}` }, body: validPayment }),
  otherPayload: (run) => ({ headers: { authorization: `Bearer ${run}` }, body: { ...validPayment, amount: 1 } }),
  failing: (run) => ({
    headers: { authorization: `Bearer ${run}` },
    body: { ...validPayment, amount: DECLINED_FROM_AMOUNT },
  }),
  effects: (run) => paymentCount(run),
});

describe('nestjs-pg-idempotency/testing: checkIdempotentRoute()', () => {
  describe.each(DEMO_HOSTS)("the demo's POST /payments on the %s host", (host) => {
    const { startDemo } = appsOn('express', host);
    let demo: RunningApp;
    beforeAll(async () => (demo = await startDemo()));
    afterAll(() => demo.close());

    it('passes every check', async () => {
      const report = await checkIdempotentRoute(paymentsAt(`${demo.url}/payments`));
      expect(report.checks).toHaveLength(7);
      expect(report.checks.filter((check) => !check.passed || check.skipped)).toEqual([]);
    });
  });

  describe('an app whose handler writes outside the key’s transaction', () => {
    const { startLab } = appsOn('express');
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [OutsideTheKeyController] })));
    afterAll(() => lab.close());

    it('is caught: the failing check finds the declined payment written, the failed commit the payment kept', async () => {
      const failure = await checkIdempotentRoute(paymentsAt(`${lab.url}/outside-the-key/payments`)).catch(
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(IdempotencyConformanceError);
      const { report, message } = failure as IdempotencyConformanceError;
      expect(report.checks.filter((check) => !check.passed).map((check) => check.name)).toEqual([
        'a handler that fails after its writes: none of them stay, on the first attempt or its retry',
        "the key's commit fails after the handler wrote: a 503, none of the writes stay, its retry writes once",
      ]);
      expect(message).toContain('the app wrote 1 rows after the failed attempt, not 0');
      expect(message).toContain("the app wrote 1 rows though the key's commit failed");
    });

    it('is caught with no failing request given: the failed commit finds the payment kept (the failing check is skipped)', async () => {
      const { failing: _failing, ...withoutFailing } = paymentsAt(`${lab.url}/outside-the-key/payments`);
      const failure = await checkIdempotentRoute(withoutFailing).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(IdempotencyConformanceError);
      const { report, message } = failure as IdempotencyConformanceError;
      expect(report.checks.filter((check) => check.skipped).map((check) => check.name)).toEqual([
        'a handler that fails after its writes: none of them stay, on the first attempt or its retry',
      ]);
      expect(report.checks.filter((check) => !check.passed).map((check) => check.name)).toEqual([
        "the key's commit fails after the handler wrote: a 503, none of the writes stay, its retry writes once",
      ]);
      expect(message).toContain("a write went outside the key's transaction");
    });
  });

  // A team's own test runner, in a process of its own, on the built package.
  it.each([
    {
      runner: 'node:test',
      args: ['--test', '--test-reporter=tap', 'test/e2e/testing-kit.node-test.mjs'],
      passed: [/^# pass 1$/m, /^# fail 0$/m],
    },
    {
      runner: 'Vitest',
      args: ['node_modules/vitest/vitest.mjs', 'run', 'test/e2e/testing-kit.vitest.test.mjs', '--reporter=verbose'],
      passed: [/Tests\s+1 passed \(1\)/],
    },
  ])(
    'runs under $runner, from the built package, against a running demo',
    async ({ args, passed }) => {
      const { startDemo } = appsOn('express');
      const demo = await startDemo();
      try {
        const { stdout } = await promisify(execFile)(process.execPath, args, {
          env: { ...process.env, DEMO_URL: demo.url, NO_COLOR: '1' },
        });
        for (const pattern of passed) expect(stdout).toMatch(pattern);
      } finally {
        await demo.close();
      }
    },
    90_000,
  );
});
