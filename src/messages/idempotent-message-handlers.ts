import { Inject, Injectable } from '@nestjs/common';
import { HandlerSettings } from '../core/handler-settings.js';
import { KeyTtls } from '../core/key-ttls.js';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENT_MESSAGE } from '../idempotency.constants.js';
import type { IdempotencySettings } from '../options/settings.js';
import type { IdempotentMessageOptions } from './message-options.js';
import { type MessageSettings, resolveMessageOptions } from './message-settings.js';

/** The settings of every `@IdempotentMessage()` handler, resolved once (`HandlerSettings`). */
@Injectable()
export class IdempotentMessageHandlers {
  private readonly handlers: HandlerSettings<MessageSettings>;

  constructor(@Inject(IDEMPOTENCY_SETTINGS) settings: IdempotencySettings, ttls: KeyTtls) {
    this.handlers = new HandlerSettings(ttls, (controller, handler) => {
      const options = Reflect.getMetadata(IDEMPOTENT_MESSAGE, handler) as IdempotentMessageOptions | undefined;
      return options && resolveMessageOptions(settings, options, `${controller.name}.${handler.name}`);
    });
  }

  /** The handler's settings; `undefined` for a handler without `@IdempotentMessage()`. */
  of(controller: Function, handler: Function): MessageSettings | undefined {
    return this.handlers.of(controller, handler);
  }
}
