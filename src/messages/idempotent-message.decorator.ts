import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_MESSAGE } from '../idempotency.constants.js';
import type { IdempotentMessageOptions } from './message-options.js';
import { IdempotentMessageInterceptor } from './message.interceptor.js';

/**
 * Makes a `@MessagePattern()` / `@EventPattern()` handler exactly-once per message key (the
 * broker's message id by default): the first delivery runs inside a transaction that also
 * reserves the key and is acked after its commit; a duplicate of a completed key is acked without
 * running (a request-reply pattern answers the stored reply); a duplicate while the key is held
 * elsewhere is requeued, not run; a failing handler's message is delivered again, and after
 * `maxAttempts` recorded as failed and dead-lettered. Consume with manual acknowledgement
 * (Transport.RMQ with `noAck: false`; `JetStreamServer` of `nestjs-pg-idempotency/jetstream`).
 */
export const IdempotentMessage = (options: IdempotentMessageOptions = {}): MethodDecorator =>
  applyDecorators(SetMetadata(IDEMPOTENT_MESSAGE, options), UseInterceptors(IdempotentMessageInterceptor));
