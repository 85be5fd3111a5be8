import { Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { HandlerSettings } from '../core/handler-settings.js';
import { KeyTtls } from '../core/key-ttls.js';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENT_ROUTE } from '../idempotency.constants.js';
import type { IdempotentRouteOptions } from '../options/module-options.js';
import { type IdempotencySettings, resolveRouteOptions, type RouteSettings } from '../options/settings.js';

/** The settings of every `@Idempotent()` route (by method or by class), resolved once (`HandlerSettings`). */
@Injectable()
export class IdempotentRoutes {
  private readonly routes: HandlerSettings<RouteSettings>;

  constructor(@Inject(IDEMPOTENCY_SETTINGS) settings: IdempotencySettings, reflector: Reflector, ttls: KeyTtls) {
    this.routes = new HandlerSettings(ttls, (controller, handler) => {
      const options = reflector.getAllAndOverride<IdempotentRouteOptions | undefined>(IDEMPOTENT_ROUTE, [
        handler,
        controller,
      ]);
      return options && resolveRouteOptions(settings, options, `${controller.name}.${handler.name}`, controller);
    });
  }

  /** The route's settings; `undefined` for a handler without `@Idempotent()` (by method or by class). */
  of(controller: Function, handler: Function): RouteSettings | undefined {
    return this.routes.of(controller, handler);
  }
}
