import { Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { HandlerSettings } from '../core/handler-settings.js';
import { KeyTtls } from '../core/key-ttls.js';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENT_ROUTE } from '../idempotency.constants.js';
import type { IdempotentRouteOptions } from '../options/route-options.js';
import { naming } from '../options/checks.js';
import { type IdempotencySettings, resolveRouteOptions, type RouteSettings } from '../options/settings.js';
import { aKeySource, type RouteKeySource } from './parse/key-source.js';
import { safeMethodOf } from './route-check/safe-method.js';

/** An `@Idempotent()` route's settings, with where it reads its key. */
export interface HttpRouteSettings extends RouteSettings {
  readonly keySource: RouteKeySource;
}

/** The settings of every `@Idempotent()` route (by method or by class), resolved once (`HandlerSettings`). */
@Injectable()
export class IdempotentRoutes {
  private readonly routes: HandlerSettings<HttpRouteSettings>;

  constructor(@Inject(IDEMPOTENCY_SETTINGS) settings: IdempotencySettings, reflector: Reflector, ttls: KeyTtls) {
    this.routes = new HandlerSettings(ttls, (controller, handler) => {
      const options = reflector.getAllAndOverride<IdempotentRouteOptions | undefined>(IDEMPOTENT_ROUTE, [
        handler,
        controller,
      ]);
      // A safe route of a controller marked as a whole is passed by (by method, bootstrap refused it).
      if (!options || safeMethodOf(handler) !== undefined) return undefined;
      const name = `${controller.name}.${handler.name}`;
      return {
        ...resolveRouteOptions(settings, options, name, controller),
        keySource: naming(`@Idempotent() on ${name}`, () => aKeySource(options.keyFrom)),
      };
    });
  }

  /** The route's settings; `undefined` for a handler without `@Idempotent()` (by method or by class). */
  of(controller: Function, handler: Function): HttpRouteSettings | undefined {
    return this.routes.of(controller, handler);
  }
}
