import { randomUUID } from 'node:crypto';
import { armCommitFault, disarmCommitFault } from './commit-fault-switch.js';
import { IdempotencyConformanceError } from './conformance-error.js';
import type {
  ConformanceCheck,
  ConformanceReport,
  ConformanceRequest,
  ConformanceTarget,
} from './conformance-target.js';

/** What a client sees of one answer. */
interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
}

const PROBLEM = /^application\/problem\+json/;

/**
 * Fires at a route of a running app what retrying clients send, and checks what a user would
 * notice against what the module promises: the status codes, the bytes of each answer, and the
 * rows the app wrote (`target.effects`). The checks, each under a run id of its own:
 * - no key, and a malformed key: a 400 problem, nothing written;
 * - duplicates at once with one key: one execution; every other answer the recorded one
 *   (`Idempotent-Replayed: true`) or a 409 problem with `Retry-After`;
 * - a retry after the answer: the same status and bytes, `Idempotent-Replayed: true`, nothing
 *   written again; the key with another payload: a 422 problem, nothing written again;
 * - a handler that fails after its writes (`target.failing`): none of them stay, on the first
 *   attempt or on its retry (a write outside the key's transaction shows here);
 * - the key's commit failing after the handler wrote (the kit makes it fail once, when the app
 *   runs in the kit's process): a 503, none of the writes stay (a write outside the key's
 *   transaction committed on its own, and a retry would write it again), and the retry writes
 *   once. Skipped when the key was not committed in this process: the app runs in another one, or
 *   the route is in lease mode, whose writes are never in the key's transaction.
 * Resolves to the report when every check passed; rejects with an `IdempotencyConformanceError`
 * (an assertion error) listing the failures otherwise.
 */
export async function checkIdempotentRoute(target: ConformanceTarget): Promise<ConformanceReport> {
  const checks: ConformanceCheck[] = [];
  for (const [name, check] of CHECKS) {
    const failures: string[] = [];
    let skipped = false;
    try {
      skipped = (await check(target, failures, randomUUID())) === 'skipped';
    } catch (error) {
      failures.push(`the check could not run: ${(error as Error).message}`);
    }
    checks.push({ name, passed: failures.length === 0, failures, ...(skipped && { skipped }) });
  }
  const report = { url: target.url, checks };
  if (checks.some((check) => !check.passed)) throw new IdempotencyConformanceError(report);
  return report;
}

type Check = (target: ConformanceTarget, failures: string[], run: string) => Promise<void | 'skipped'>;

const CHECKS: readonly [string, Check][] = [
  ['no Idempotency-Key: a 400 problem, nothing written', refusedKey(undefined)],
  ['a malformed Idempotency-Key: a 400 problem, nothing written', refusedKey('malformed')],
  ['duplicates at once with one key: one execution, every other answer the recorded one or a 409', duplicates],
  ['a retry after the answer: the same status and bytes, replayed, nothing written again', retried],
  ['the key with another payload: a 422 problem, nothing written again', otherPayload],
  ['a handler that fails after its writes: none of them stay, on the first attempt or its retry', failing],
  [
    "the key's commit fails after the handler wrote: a 503, none of the writes stay, its retry writes once",
    commitFailed,
  ],
];

function refusedKey(key: 'malformed' | undefined): Check {
  return async (target, failures, run) => {
    const answer = await send(target, target.request(run), key && (target.malformedKey ?? 'not a key'));
    expectProblem(answer, 400, failures);
    await expectEffects(target, run, 0, failures);
  };
}

async function duplicates(target: ConformanceTarget, failures: string[], run: string): Promise<void> {
  const key = newKey(target);
  const count = target.duplicates ?? 10;
  const answers = await Promise.all(Array.from({ length: count }, () => send(target, target.request(run), key)));
  await expectEffects(target, run, 1, failures);
  const successes = answers.filter((answer) => answer.status < 300);
  const first = successes.find((answer) => answer.headers.get('idempotent-replayed') !== 'true') ?? successes[0];
  if (!first) {
    failures.push(`no duplicate succeeded: statuses ${answers.map((answer) => answer.status).join(', ')}`);
    return;
  }
  for (const answer of answers) {
    if (answer === first) continue;
    if (answer.status === 409) {
      if (!PROBLEM.test(answer.headers.get('content-type') ?? '')) failures.push('a 409 was not a problem+json');
      if (!answer.headers.get('retry-after')) failures.push('a 409 came without Retry-After');
    } else if (!sameAnswer(answer, first)) {
      failures.push(`a duplicate was answered ${describe(answer)}, not the recorded ${describe(first)} nor a 409`);
    } else if (answer.headers.get('idempotent-replayed') !== 'true') {
      failures.push('two duplicates were answered as executed (no Idempotent-Replayed: true on either)');
    }
  }
}

async function retried(target: ConformanceTarget, failures: string[], run: string): Promise<void> {
  const key = newKey(target);
  const first = await succeeded(target, run, key, failures);
  if (!first) return;
  const again = await send(target, target.request(run), key);
  if (!sameAnswer(again, first)) failures.push(`the retry was answered ${describe(again)}, not ${describe(first)}`);
  if (again.headers.get('idempotent-replayed') !== 'true') failures.push('the retry had no Idempotent-Replayed: true');
  await expectEffects(target, run, 1, failures);
}

async function otherPayload(target: ConformanceTarget, failures: string[], run: string): Promise<void> {
  const key = newKey(target);
  if (!(await succeeded(target, run, key, failures))) return;
  expectProblem(await send(target, target.otherPayload(run), key), 422, failures);
  await expectEffects(target, run, 1, failures);
}

async function failing(target: ConformanceTarget, failures: string[], run: string): Promise<void | 'skipped'> {
  if (!target.failing) return 'skipped';
  const key = newKey(target);
  const first = await send(target, target.failing(run), key);
  if (first.status < 400) {
    failures.push(`the failing request was answered ${describe(first)}, not a 4xx or 5xx: check target.failing()`);
    return;
  }
  await expectEffects(target, run, 0, failures, 'after the failed attempt');
  const again = await send(target, target.failing(run), key);
  if (again.status < 400) failures.push(`its retry was answered ${describe(again)}`);
  await expectEffects(target, run, 0, failures, 'after its retry');
}

async function commitFailed(target: ConformanceTarget, failures: string[], run: string): Promise<void | 'skipped'> {
  const key = newKey(target);
  armCommitFault(key);
  let first: Answer;
  let failedOnPurpose = false;
  try {
    first = await send(target, target.request(run), key);
  } finally {
    failedOnPurpose = disarmCommitFault(key);
  }
  if (!failedOnPurpose) return 'skipped';
  if (first.status !== 503) failures.push(`the request whose commit failed was answered ${describe(first)}, not a 503`);
  const effects = await target.effects(run);
  if (effects !== 0)
    failures.push(
      `the app wrote ${effects} rows though the key's commit failed: a write went outside the key's transaction ` +
        "(it committed on its own, and a retry writes it again): write through the key's transaction",
    );
  const again = await send(target, target.request(run), key);
  if (again.status >= 300) failures.push(`its retry was answered ${describe(again)}, not a 2xx`);
  await expectEffects(target, run, effects + 1, failures, 'after its retry');
}

/** The target's request sent with `key`, when it succeeded; else the failure is noted. */
async function succeeded(
  target: ConformanceTarget,
  run: string,
  key: string,
  failures: string[],
): Promise<Answer | undefined> {
  const first = await send(target, target.request(run), key);
  if (first.status < 300) return first;
  failures.push(`the request was answered ${describe(first)}, not a 2xx: check target.request()`);
  return undefined;
}

function newKey(target: ConformanceTarget): string {
  return target.newKey ? target.newKey() : randomUUID();
}

async function send(target: ConformanceTarget, request: ConformanceRequest, key?: string): Promise<Answer> {
  const response = await fetch(target.url, {
    method: target.method ?? 'POST',
    headers: {
      'content-type': 'application/json',
      ...request.headers,
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

function sameAnswer(answer: Answer, recorded: Answer): boolean {
  return answer.status === recorded.status && answer.body.equals(recorded.body);
}

function expectProblem(answer: Answer, status: number, failures: string[]): void {
  if (answer.status !== status) failures.push(`answered ${describe(answer)}, not a ${status}`);
  else if (!PROBLEM.test(answer.headers.get('content-type') ?? ''))
    failures.push(`the ${status} was ${answer.headers.get('content-type')}, not application/problem+json`);
}

async function expectEffects(
  target: ConformanceTarget,
  run: string,
  expected: number,
  failures: string[],
  when = '',
): Promise<void> {
  const effects = await target.effects(run);
  if (effects !== expected)
    failures.push(`the app wrote ${effects} rows${when && ` ${when}`}, not ${expected} (target.effects)`);
}

function describe(answer: Answer): string {
  const text = answer.body.toString('utf8');
  return `${answer.status} ${text.length > 120 ? `${text.slice(0, 120)}…` : text}`;
}
