import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { EMPTY, lastValueFrom, NEVER, type Observable, of, throwError } from 'rxjs';
import { IdempotencyConfigurationError, IdempotencyError } from '../idempotency.errors.js';
import { IdempotentMessageHandlers } from './idempotent-message-handlers.js';
import { type MessageOutcome, settlementOf } from './message/message-outcome.js';
import { MessageRunner } from './message-run.js';
import { deliveryOf } from './transports/deliveries.js';

/** What a request-reply pattern answers for a message that ended without a reply (failed, dead-lettered, refused). */
export class MessageNotAnsweredError extends IdempotencyError {}

/** `microservices:handler_type` (`@nestjs/microservices` `PatternHandler`): 1 for `@MessagePattern()`, 2 for `@EventPattern()`. */
const HANDLER_TYPE_METADATA = 'microservices:handler_type';
const MESSAGE_PATTERN = 1;

/**
 * The message entry of an `@IdempotentMessage()` handler: reads the delivery from the transport's
 * context, runs it through the stages (`MessageRunner`), settles it with the broker after the
 * outcome is recorded, then answers. An event pattern answers nothing. A request-reply pattern
 * answers once per request, with its final outcome: its reply (the stored one for a duplicate),
 * or one error for a message dead-lettered, recorded as failed or malformed. A delivery that is
 * requeued (its key held elsewhere, its handler failed with attempts left, the store unavailable)
 * answers nothing: its next delivery answers.
 */
@Injectable()
export class MessageEntry implements NestInterceptor {
  constructor(
    private readonly handlers: IdempotentMessageHandlers,
    private readonly runner: MessageRunner,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const settings = this.handlers.of(context.getClass(), context.getHandler());
    if (!settings || context.getType() !== 'rpc') return next.handle();
    const found = deliveryOf(context.switchToRpc());
    if (!found) {
      throw new IdempotencyConfigurationError(
        `${settings.handler}: @IdempotentMessage() needs a transport whose messages it can acknowledge: Nest's RMQ transport (noAck: false), ` +
          'or JetStreamServer (nestjs-pg-idempotency/jetstream); for another, call IdempotentMessages.consume() from the consumer',
      );
    }
    const outcome = await this.runner.run(found.delivery.message, settings, () =>
      lastValueFrom(next.handle(), { defaultValue: undefined }),
    );
    await found.delivery.settle(settlementOf(outcome), settings.retryDelayMs, outcome.kind === 'retry');
    const replies = Reflect.getMetadata(HANDLER_TYPE_METADATA, context.getHandler()) === MESSAGE_PATTERN;
    return replies ? answerOf(outcome, found.publishesEnd) : of(undefined);
  }
}

/**
 * A request-reply pattern's answer for `outcome`. A delivery that is requeued answers nothing.
 * Nest's RMQ server publishes how the Observable ends, not only its values: `EMPTY` would still
 * send `{ isDisposed: true }`, which a ClientProxy takes as the request's answer (one without a
 * value). `NEVER` ends neither with a value nor at all, so nothing is published; it keeps no timer
 * and no reference to its subscriber, so the subscription Nest opens for the delivery is collected
 * with it (the server's processing end hook, when the app sets one, does not run for it). A
 * transport of the module's own publishes nothing and waits for the end: `EMPTY` ends at once.
 */
function answerOf(outcome: MessageOutcome, publishesEnd: boolean): Observable<unknown> {
  switch (outcome.kind) {
    case 'executed':
    case 'duplicate':
      return of(outcome.reply);
    case 'held':
    case 'retry':
    case 'unavailable':
      return publishesEnd ? NEVER : EMPTY;
    case 'failed-before':
      return throwError(() => new MessageNotAnsweredError(`the message was recorded as failed: ${outcome.error}`));
    case 'tombstone':
      return throwError(
        () =>
          new MessageNotAnsweredError(
            `the message's key completed at ${outcome.completedAt.toISOString()}; its reply is no longer kept, and it was not run again`,
          ),
      );
    case 'dead':
      return throwError(
        () =>
          new MessageNotAnsweredError(
            `the message failed its last attempt and was dead-lettered: ${(outcome.error as Error)?.message ?? String(outcome.error)}`,
            { cause: outcome.error },
          ),
      );
    case 'mismatch':
      return throwError(
        () =>
          new MessageNotAnsweredError(
            'the message came with a key already used for another payload; it was not run, and was dead-lettered',
          ),
      );
    case 'malformed':
      return throwError(() => new MessageNotAnsweredError(`the message cannot be de-duplicated: ${outcome.why}`));
  }
}
