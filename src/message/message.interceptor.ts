import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { lastValueFrom, type Observable, of, throwError } from 'rxjs';
import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import { IdempotentMessageHandlers } from './idempotent-message-handlers.js';
import { type MessageOutcome, settlementOf } from './message-outcome.js';
import { MessageRunner } from './message-run.js';
import { deliveryOf } from './transports/deliveries.js';

/** `microservices:handler_type` (`@nestjs/microservices` `PatternHandler`): 1 for `@MessagePattern()`, 2 for `@EventPattern()`. */
const HANDLER_TYPE_METADATA = 'microservices:handler_type';
const MESSAGE_PATTERN = 1;

/**
 * The message entry of an `@IdempotentMessage()` handler: reads the delivery from the transport's
 * context, runs it through the stages (`MessageRunner`), settles it with the broker after the
 * outcome is recorded, then answers: a request-reply pattern its reply (the stored one for a
 * duplicate), or an error for a delivery that was not run; an event pattern nothing.
 */
@Injectable()
export class IdempotentMessageInterceptor implements NestInterceptor {
  constructor(
    private readonly handlers: IdempotentMessageHandlers,
    private readonly runner: MessageRunner,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const settings = this.handlers.of(context.getClass(), context.getHandler());
    if (!settings || context.getType() !== 'rpc') return next.handle();
    const delivery = deliveryOf(context.switchToRpc());
    if (!delivery) {
      throw new IdempotencyConfigurationError(
        `${settings.handler}: @IdempotentMessage() needs a transport whose messages it can acknowledge: Nest's RMQ transport (noAck: false), ` +
          'or JetStreamServer (nestjs-pg-idempotency/jetstream); for another, call IdempotentMessages.consume() from the consumer',
      );
    }
    const outcome = await this.runner.run(delivery.message, settings, () => lastValueFrom(next.handle(), { defaultValue: undefined }));
    await delivery.settle(settlementOf(outcome), settings.retryDelayMs, outcome.kind === 'retry');
    const replies = Reflect.getMetadata(HANDLER_TYPE_METADATA, context.getHandler()) === MESSAGE_PATTERN;
    return replies ? replyOf(outcome) : of(undefined);
  }
}

/** A request-reply pattern's answer for `outcome`. */
function replyOf(outcome: MessageOutcome): Observable<unknown> {
  switch (outcome.kind) {
    case 'executed':
    case 'duplicate':
      return of(outcome.reply);
    case 'failed-before':
      return throwError(() => new Error(`the message was recorded as failed: ${outcome.error}`));
    case 'malformed':
      return throwError(() => new Error(`the message cannot be de-duplicated: ${outcome.why}`));
    default:
      return throwError(() => new Error(`the message was not run (${outcome.kind}); it is delivered again or dead-lettered`));
  }
}
