import { type CallHandler, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { lastValueFrom, type Observable, of } from 'rxjs';
import { ExactlyOnce } from '../core/exactly-once.js';
import { RELEASE_EVERY_FAILURE } from '../core/run-rules.js';
import type { RunOutcome } from '../core/run-outcome.js';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import { callerIdOf } from '../key/caller-id.js';
import type { IdempotentRequest } from '../key/idempotent-request.js';
import { payloadFingerprint } from '../key/payload-fingerprint.js';
import { buildRequest, ENDPOINT_PREFIXES, isRefusal } from '../key/request-builder.js';
import type { IdempotencySettings } from '../options/settings.js';
import { IdempotentMutations, type MutationSettings } from './idempotent-mutations.js';
import { IdempotentMutationError } from './mutation-error.js';
import { readMutationKey } from './mutation-key-source.js';
import { recordable, revived } from './field-value.js';

/** What the entry reads of graphql-js's resolve info. */
interface ResolveInfo {
  readonly fieldName: string;
  readonly parentType: { readonly name: string };
}

/** What the entry reads of the context both drivers build: the HTTP request, and Fastify's reply (Mercurius). */
interface GraphqlContext {
  readonly req?: any;
  readonly reply?: { header?(name: string, value: string): unknown };
}

/**
 * The GraphQL entry: an `@Idempotent()` mutation field (Apollo, Mercurius) → `ExactlyOnce.run()`
 * → the field's value (run here, or the recorded one), or a field error with a stable
 * `extensions.code`. Each keyed mutation of a document is its own key: scoped by the caller and
 * the mutation's field, fingerprinted over the field's arguments (a client may change the
 * selection set). A failure of the resolver frees the key and undoes its writes, and the error
 * reaches the client as it was thrown.
 */
@Injectable()
export class GraphqlEntry {
  /**
   * The resolutions this entry is running, so that a second pass of the interceptor through one
   * field while it runs (registered globally and by decorator) passes on; a pass after it ends (an
   * outer interceptor that subscribes again) is a retry, and goes through the key again.
   */
  private readonly running = new WeakSet<object>();

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly mutations: IdempotentMutations,
    private readonly core: ExactlyOnce,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const mutation = this.mutations.of(context.getClass(), context.getHandler());
    const [, args, graphqlContext, info] = context.getArgs() as [unknown, unknown, GraphqlContext, ResolveInfo];
    if (!mutation || !info || this.running.has(info)) return next.handle();
    this.running.add(info);
    try {
      const request = this.read(mutation, args, graphqlContext, info, context);
      if (!request) return next.handle();
      const outcome = await this.core.run(
        request,
        mutation,
        async () => recordable(await lastValueFrom(next.handle(), { defaultValue: null })),
        RELEASE_EVERY_FAILURE,
      );
      return of(this.answer(outcome, mutation, graphqlContext));
    } catch (error) {
      // A refusal is the field's value: graphql-js answers a returned Error as the field's error,
      // and Nest does not log it as an exception of the app's.
      if (error instanceof IdempotentMutationError) return of(error);
      throw error;
    } finally {
      this.running.delete(info);
    }
  }

  /** The key's request of a mutation's call; `undefined` when there is no key and none is required. */
  private read(
    mutation: MutationSettings,
    args: unknown,
    graphqlContext: GraphqlContext,
    info: ResolveInfo,
    context: ExecutionContext,
  ): IdempotentRequest | undefined {
    const httpRequest = graphqlContext?.req;
    const key = readMutationKey(mutation.keySource, args, httpRequest, mutation.keys);
    if (key === undefined) {
      if (!mutation.required) return undefined;
      const where =
        mutation.keySource.kind === 'header'
          ? `the ${mutation.keySource.name} header`
          : `the argument "${mutation.keySource.path}"`;
      throw new IdempotentMutationError(
        'IDEMPOTENCY_KEY_MISSING',
        `the mutation ${info.fieldName} needs an idempotency key (${mutation.keys.text}) in ${where}`,
      );
    }
    const request = buildRequest({
      key,
      keyChecked: true,
      caller: callerIdOf(mutation.caller(httpRequest ?? {}, context)),
      anonymous: this.settings.anonymousCallers,
      endpoint: { prefix: ENDPOINT_PREFIXES.mutation, name: `${info.parentType.name}.${info.fieldName}` },
      ttlMs: mutation.ttlMs,
      tombstoneMs: mutation.tombstoneMs,
      keyStorage: this.settings.keyStorage,
      fingerprint: () => payloadFingerprint(args ?? {}),
    });
    if (!isRefusal(request)) return request;
    switch (request.refused) {
      case 'anonymous':
        throw new IdempotentMutationError(
          'UNAUTHENTICATED',
          'an idempotency key belongs to a caller, and this request has none',
        );
      case 'caller':
        throw new IdempotentMutationError(
          'UNAUTHENTICATED',
          `the caller's id is not a string of at most ${request.maxBytes} bytes that PostgreSQL can store`,
        );
      default:
        throw new IdempotentMutationError('IDEMPOTENCY_KEY_INVALID', 'the mutation’s name is too long for a key');
    }
  }

  /** The field's value, or the error it answers with. */
  private answer(outcome: RunOutcome, mutation: MutationSettings, graphqlContext: GraphqlContext): unknown {
    switch (outcome.kind) {
      case 'executed':
      case 'replayed':
        return revived(outcome.value);
      case 'failed':
        throw outcome.error;
      case 'mismatch':
        throw new IdempotentMutationError(
          'IDEMPOTENCY_KEY_PARAMETER_MISMATCH',
          'this idempotency key was used with other arguments for this mutation; send a new key for a new operation',
        );
      case 'tombstone':
        throw new IdempotentMutationError(
          'IDEMPOTENCY_KEY_EXPIRED',
          `this idempotency key completed at ${outcome.tombstone.completedAt.toISOString()}; its result was kept until ` +
            `${outcome.tombstone.responseExpiredAt.toISOString()} and is gone, and the mutation was not run again`,
        );
      case 'held':
        throw this.retryLater(
          'IDEMPOTENCY_CONCURRENT_REQUEST',
          'a request with this idempotency key is still running this mutation; retry after retryAfterSeconds',
          outcome.retryAfterSeconds ?? mutation.retryAfterSeconds,
          graphqlContext,
        );
      case 'lease-lost':
        throw this.retryLater(
          'IDEMPOTENCY_LEASE_TAKEN_OVER',
          'the lease on this idempotency key was taken over before the mutation finished; retry to get its outcome',
          mutation.retryAfterSeconds,
          graphqlContext,
        );
      case 'unavailable':
        if (outcome.reason === 'not-migrated')
          throw new IdempotentMutationError(
            'IDEMPOTENCY_STORE_NOT_MIGRATED',
            "the server's idempotency table has not been created, so nothing ran; a retry fails the same way until the migration is run",
          );
        throw this.retryLater(
          'IDEMPOTENCY_UNAVAILABLE',
          outcome.reason === 'shutting-down'
            ? 'the server is shutting down; nothing ran; retry after retryAfterSeconds'
            : 'the idempotency store is unavailable; nothing ran or was kept; retry after retryAfterSeconds',
          mutation.retryAfterSeconds,
          graphqlContext,
          outcome.error,
        );
      case 'failed-before':
      case 'failure-recorded':
        // A mutation's failures free its key (RELEASE_EVERY_FAILURE): neither is recorded.
        throw new IdempotentMutationError('IDEMPOTENCY_UNAVAILABLE', 'the key holds a recorded failure');
    }
  }

  /** An error a retry fixes, with `Retry-After` on the HTTP response where the driver gives one. */
  private retryLater(
    code: 'IDEMPOTENCY_CONCURRENT_REQUEST' | 'IDEMPOTENCY_LEASE_TAKEN_OVER' | 'IDEMPOTENCY_UNAVAILABLE',
    message: string,
    seconds: number,
    graphqlContext: GraphqlContext,
    cause?: unknown,
  ): IdempotentMutationError {
    const response = graphqlContext?.req?.res;
    if (typeof graphqlContext?.reply?.header === 'function')
      graphqlContext.reply.header('Retry-After', String(seconds));
    else if (response && !response.headersSent && typeof response.setHeader === 'function')
      response.setHeader('Retry-After', String(seconds));
    return new IdempotentMutationError(code, message, seconds, cause === undefined ? undefined : { cause });
  }
}
