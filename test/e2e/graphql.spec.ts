import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { appDatabaseUrl } from '../support/apps.js';
import { keyRows, sql } from '../support/database.js';
import { newCaller } from '../support/http.js';
import { amounts } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';

/** The GraphQL app (schema first; Apollo on Express or Mercurius on Fastify) run as processes. */
const GRAPHQL_APP = 'test/e2e/graphql.app.mjs';
/**
 * Each driver on its platform, writing through each host: TypeORM and the module's node-postgres
 * pool (Drizzle) run every test; the other hosts (cls on TypeORM, Prisma, cls on Prisma) run the
 * ones about the key's transaction (concurrency, a failure after the write).
 */
const SETUPS = [
  { driver: 'apollo', host: 'typeorm', every: true },
  { driver: 'mercurius', host: 'drizzle', every: true },
  { driver: 'mercurius', host: 'cls', every: false },
  { driver: 'apollo', host: 'prisma', every: false },
  { driver: 'apollo', host: 'cls-prisma', every: false },
] as const;

const CREATE_PAYMENT = `mutation Pay($amount: Int!, $holdMs: Int, $fail: Boolean, $kill: Boolean) {
  createPayment(amount: $amount, holdMs: $holdMs, fail: $fail, kill: $kill) { id caller amount createdAt label }
}`;

interface GraphqlError {
  message: string;
  path?: string[];
  extensions?: { code?: string; retryAfterSeconds?: number };
}
interface Answer {
  status: number;
  retryAfter: string | null;
  data: Record<
    string,
    { id: string; caller: string; amount: number; createdAt?: string; label?: string } | null
  > | null;
  errors?: GraphqlError[];
}

async function graphql(
  app: DemoProcess,
  query: string,
  variables: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as Pick<Answer, 'data' | 'errors'>;
  return { status: response.status, retryAfter: response.headers.get('retry-after'), ...body };
}

const codes = (answer: Answer): Array<string | undefined> =>
  (answer.errors ?? []).map((error) => error.extensions?.code);

describe.each(SETUPS)(
  '@Idempotent() GraphQL mutations, $driver driver on the $host host, with processes',
  ({ driver, host, every }) => {
    const apps: DemoProcess[] = [];
    let first: DemoProcess;
    let second: DemoProcess;
    const started = async (env: Record<string, string> = {}) => {
      const app = await startAppProcess(GRAPHQL_APP, { DRIVER: driver, HOST: host, ...env });
      apps.push(app);
      return app;
    };
    beforeAll(async () => {
      [first, second] = await Promise.all([started(), started()]);
    });
    afterAll(async () => {
      await Promise.all(apps.splice(0).map((app) => app.kill().catch(() => undefined)));
    });

    const pay = (app: DemoProcess, caller: string, key: string | undefined, variables: Record<string, unknown>) =>
      graphql(app, CREATE_PAYMENT, variables, {
        'x-caller': caller,
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      });

    it('50 concurrent calls with one key over two processes: one payment; the others told IDEMPOTENCY_CONCURRENT_REQUEST (Retry-After) or given the recorded result; every retry gets that result', async () => {
      const [caller, key] = [newCaller(), randomUUID()];
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => pay(i % 2 ? second : first, caller, key, { amount: 21, holdMs: 400 })),
      );
      const ran = answers.filter((answer) => answer.data?.createPayment);
      const held = answers.filter((answer) => codes(answer).includes('IDEMPOTENCY_CONCURRENT_REQUEST'));
      expect(ran.length + held.length).toBe(50);
      expect(ran.length).toBeGreaterThanOrEqual(1);
      expect(held.length).toBeGreaterThanOrEqual(1);
      const ids = new Set(ran.map((answer) => answer.data!.createPayment!.id));
      expect(ids.size).toBe(1);
      for (const answer of held) {
        expect(answer.status).toBe(200);
        expect(answer.data).toBeNull();
        expect(answer.errors![0].path).toEqual(['createPayment']);
        expect(answer.errors![0].extensions!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
        expect(answer.retryAfter).toBe(String(answer.errors![0].extensions!.retryAfterSeconds));
      }
      await waitFor('the key to complete', async () => (await keyRows(caller))[0]?.state === 'completed');
      const retries = await Promise.all(
        held.map((_, i) => pay(i % 2 ? first : second, caller, key, { amount: 21, holdMs: 400 })),
      );
      expect(retries.map((answer) => answer.errors)).toEqual(retries.map(() => undefined));
      expect(new Set(retries.map((answer) => answer.data!.createPayment!.id))).toEqual(ids);
      // The replay's value is the recorded one, its Date a Date again (the DateTime scalar and the
      // field resolver read it): the same bytes as the first answer.
      expect(retries.map((answer) => answer.data)).toEqual(retries.map(() => ran[0].data));
      expect(ran[0].data!.createPayment!.label).toBe(`21 on ${ran[0].data!.createPayment!.createdAt}`);
      // A refusal is the field's error, not an exception of the app's: nothing is logged for it.
      expect(first.output() + second.output()).not.toMatch(/still running this mutation/);
      expect(await amounts(caller)).toEqual([21]);
      expect(await keyRows(caller)).toEqual([
        { key, endpoint: 'GRAPHQL Mutation.createPayment', state: 'completed', status: expect.any(Number) },
      ]);
    });

    if (every) {
      it('a replay may select other fields (the fingerprint is the arguments); other arguments with the key are IDEMPOTENCY_KEY_PARAMETER_MISMATCH and run nothing', async () => {
        const [caller, key] = [newCaller(), randomUUID()];
        const firstAnswer = await pay(first, caller, key, { amount: 22 });
        expect(firstAnswer.errors).toBeUndefined();
        const narrower = await graphql(
          second,
          'mutation { createPayment(amount: 22) { id } }',
          {},
          { 'x-caller': caller, 'idempotency-key': key },
        );
        expect(narrower).toMatchObject({ data: { createPayment: { id: firstAnswer.data!.createPayment!.id } } });
        expect(Object.keys(narrower.data!.createPayment!)).toEqual(['id']);
        const other = await pay(second, caller, key, { amount: 23 });
        expect(codes(other)).toEqual(['IDEMPOTENCY_KEY_PARAMETER_MISMATCH']);
        expect(other.data).toBeNull();
        expect(await amounts(caller)).toEqual([22]);
      });

      it("one caller's key is not another's: the same key from another caller runs for that caller", async () => {
        const [one, two, key] = [newCaller(), newCaller(), randomUUID()];
        const [a, b] = [await pay(first, one, key, { amount: 24 }), await pay(second, two, key, { amount: 24 })];
        expect(a.data!.createPayment!.id).not.toBe(b.data!.createPayment!.id);
        expect([await amounts(one), await amounts(two)]).toEqual([[24], [24]]);
        expect([(await keyRows(one)).length, (await keyRows(two)).length]).toEqual([1, 1]);
      });

      it('two keyed mutations in one document, sent twice: each runs once (one by the header key, one by its argument key), the second answer equal to the first', async () => {
        const [caller, payer, key, refundKey] = [newCaller(), newCaller(), randomUUID(), `refund-${randomUUID()}`];
        const document = `mutation Both($refund: RefundInput!) {
      createPayment(amount: 25) { id amount }
      refund(input: $refund) { id caller amount }
    }`;
        const variables = { refund: { key: refundKey, payer, amount: 26 } };
        const headers = { 'x-caller': caller, 'idempotency-key': key };
        const once = await graphql(first, document, variables, headers);
        const twice = await graphql(second, document, variables, headers);
        expect(once.errors).toBeUndefined();
        expect(twice).toEqual({ ...once, retryAfter: null });
        expect([await amounts(caller), await amounts(payer)]).toEqual([[25], [26]]);
        expect(await sql('SELECT caller, endpoint FROM idempotency_keys WHERE key = $1', [refundKey])).toEqual([
          { caller: 'refunds', endpoint: 'GRAPHQL Mutation.refund' },
        ]);
      });

      it('no key: IDEMPOTENCY_KEY_MISSING; a malformed or empty key (header or argument): IDEMPOTENCY_KEY_INVALID; nothing runs or is kept', async () => {
        const caller = newCaller();
        const missing = await pay(first, caller, undefined, { amount: 27 });
        expect(codes(missing)).toEqual(['IDEMPOTENCY_KEY_MISSING']);
        expect(missing.errors![0].message).toMatch(/Idempotency-Key header/);
        const malformed = await pay(first, caller, 'not a uuid', { amount: 27 });
        expect(codes(malformed)).toEqual(['IDEMPOTENCY_KEY_INVALID']);
        const badArgument = await graphql(
          second,
          'mutation { refund(input: { key: "café", payer: "p", amount: 1 }) { id } }',
          {},
        );
        expect(codes(badArgument)).toEqual(['IDEMPOTENCY_KEY_INVALID']);
        expect(badArgument.errors![0].message).toMatch(/argument "input.key"/);
        const emptyArgument = await graphql(
          second,
          'mutation { refund(input: { key: "", payer: "p", amount: 1 }) { id } }',
          {},
        );
        expect(codes(emptyArgument)).toEqual(['IDEMPOTENCY_KEY_INVALID']);
        expect(emptyArgument.errors![0].message).toBe('the key in the argument "input.key" is empty');
        const emptyHeader = await pay(first, caller, '', { amount: 27 });
        expect(codes(emptyHeader)).toEqual(['IDEMPOTENCY_KEY_INVALID']);
        expect(await amounts(caller)).toEqual([]);
        expect(await keyRows(caller)).toEqual([]);
      });
    }

    it('a resolver that writes and then throws: its error reaches the client, its write is undone and its key freed; the retry runs once', async () => {
      const [caller, key] = [newCaller(), randomUUID()];
      const failed = await pay(first, caller, key, { amount: 28, fail: true });
      expect(failed.errors![0].message).toBe('the payment fails after its write');
      expect(await amounts(caller)).toEqual([]);
      expect(await keyRows(caller)).toEqual([]);
      const retried = await pay(second, caller, key, { amount: 28 });
      expect(retried.errors).toBeUndefined();
      expect(await amounts(caller)).toEqual([28]);
    });

    if (every)
      it('a process SIGKILLed after the write and before the commit: nothing was kept, and the retry to the other process runs once', async () => {
        const [caller, key] = [newCaller(), randomUUID()];
        const doomed = await started();
        await expect(pay(doomed, caller, key, { amount: 29, kill: true })).rejects.toThrow();
        expect(await amounts(caller)).toEqual([]);
        // The dead process's key stays held until PostgreSQL notices its closed connection.
        const retried = await waitFor('the retry to run', async () => {
          const answer = await pay(second, caller, key, { amount: 29 });
          return codes(answer).includes('IDEMPOTENCY_CONCURRENT_REQUEST') ? undefined : answer;
        });
        expect(retried.errors).toBeUndefined();
        expect(await amounts(caller)).toEqual([29]);
      });
  },
);

describe('@Idempotent() GraphQL mutations in lease mode (apollo, typeorm), with processes', () => {
  const apps: DemoProcess[] = [];
  afterAll(async () => {
    await Promise.all(apps.splice(0).map((app) => app.kill().catch(() => undefined)));
  });

  it('20 concurrent calls with one key over two processes: one payment, under a lease; the retries get the recorded payment', async () => {
    const env = { DRIVER: 'apollo', HOST: 'typeorm', MUTATION_OPTIONS: JSON.stringify({ mode: 'lease' }) };
    apps.push(...(await Promise.all([startAppProcess(GRAPHQL_APP, env), startAppProcess(GRAPHQL_APP, env)])));
    const [caller, key] = [newCaller(), randomUUID()];
    const headers = { 'x-caller': caller, 'idempotency-key': key };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => graphql(apps[i % 2], CREATE_PAYMENT, { amount: 31, holdMs: 300 }, headers)),
    );
    const ids = new Set(answers.filter((answer) => answer.data?.createPayment).map((a) => a.data!.createPayment!.id));
    expect(ids.size).toBe(1);
    expect(
      answers.every((answer) => answer.data?.createPayment || codes(answer)[0] === 'IDEMPOTENCY_CONCURRENT_REQUEST'),
    ).toBe(true);
    await waitFor('the key to complete', async () => (await keyRows(caller))[0]?.state === 'completed');
    const retry = await graphql(apps[1], CREATE_PAYMENT, { amount: 31, holdMs: 300 }, headers);
    expect(ids.has(retry.data!.createPayment!.id)).toBe(true);
    expect(await amounts(caller)).toEqual([31]);
  });
});

describe('@Idempotent() where a GraphQL resolver cannot take it fails the bootstrap', () => {
  const bootstrap = async (env: Record<string, string>) => {
    const run = promisify(execFile)(process.execPath, [GRAPHQL_APP], {
      env: { ...process.env, DATABASE_URL: appDatabaseUrl(), DRIVER: 'apollo', HOST: 'typeorm', ...env },
      timeout: 60_000,
    });
    return run.then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );
  };

  it.each([
    [
      'on a query',
      { MARK_QUERY: '1' },
      /PaymentsResolver\.payments \(a GraphQL query: only a mutation changes anything\)/,
    ],
    [
      'on a field resolver',
      { MARK_FIELD: '1' },
      /PaymentFieldsResolver\.label \(a GraphQL field resolver: only a mutation changes anything\)/,
    ],
    [
      'with an option of HTTP routes',
      { MUTATION_OPTIONS: JSON.stringify({ wait: '1s', storeResponse: 'always' }) },
      /@Idempotent\(\) on PaymentsResolver\.createPayment: "storeResponse", "wait": an option of HTTP routes/,
    ],
    [
      'reading its key from the body',
      { MUTATION_OPTIONS: JSON.stringify({ keyFrom: { body: 'id' } }) },
      /option "keyFrom" of a mutation must be \{ header: 'Header-Name' \} or \{ argument: 'name' \}/,
    ],
  ])('%s: the process exits, naming the resolver and what to change', async (_case, env, message) => {
    const failure = await bootstrap(env);
    expect(failure.code).not.toBe(0);
    expect(failure.stderr).toMatch(message);
  });
});
