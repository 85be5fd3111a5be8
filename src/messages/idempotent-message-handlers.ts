import { Inject, Injectable } from '@nestjs/common';
import { KeyTtls } from '../core/key-ttls.js';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENT_MESSAGE } from '../idempotency.constants.js';
import type { IdempotencySettings } from '../options/settings.js';
import type { IdempotentMessageOptions } from './message-options.js';
import { type MessageSettings, resolveMessageOptions } from './message-settings.js';

/**
 * The settings of every `@IdempotentMessage()` handler, resolved once: the bootstrap check
 * resolves each handler it finds (an invalid option fails the bootstrap; its ttl is noted for the
 * key table), and the interceptor reads them here, by controller class and handler.
 */
@Injectable()
export class IdempotentMessageHandlers {
  private readonly handlers = new WeakMap<object, WeakMap<object, MessageSettings | null>>();

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly ttls: KeyTtls,
  ) {}

  /** The handler's settings; `undefined` for a handler without `@IdempotentMessage()`. */
  of(controller: Function, handler: Function): MessageSettings | undefined {
    let handlers = this.handlers.get(controller);
    if (!handlers) this.handlers.set(controller, (handlers = new WeakMap()));
    let found = handlers.get(handler);
    if (found === undefined) {
      const options = Reflect.getMetadata(IDEMPOTENT_MESSAGE, handler) as IdempotentMessageOptions | undefined;
      found = options === undefined ? null : resolveMessageOptions(this.settings, options, `${controller.name}.${handler.name}`);
      handlers.set(handler, found);
      if (found) this.ttls.note(found.ttlMs);
    }
    return found ?? undefined;
  }
}
