import { Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { KeyTtls } from '../core/key-ttls.js';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENT_ROUTE } from '../idempotency.constants.js';
import type { IdempotentRouteOptions } from '../options/module-options.js';
import { type IdempotencySettings, resolveRouteOptions, type RouteSettings } from '../options/settings.js';

/**
 * The settings of every `@Idempotent()` route, resolved once: the bootstrap check resolves each
 * route it finds (an invalid option fails the bootstrap), and the interceptor reads them here.
 * Kept by controller class and then handler: an inherited handler is one function for every
 * subclass, each of which may mark it differently.
 */
@Injectable()
export class IdempotentRoutes {
  private readonly routes = new WeakMap<object, WeakMap<object, RouteSettings | null>>();

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly reflector: Reflector,
    private readonly ttls: KeyTtls,
  ) {}

  /** The route's settings; `undefined` for a handler without `@Idempotent()` (by method or by class). */
  of(controller: Function, handler: Function): RouteSettings | undefined {
    let routes = this.routes.get(controller);
    if (!routes) this.routes.set(controller, (routes = new WeakMap()));
    let route = routes.get(handler);
    if (route === undefined) {
      const options = this.reflector.getAllAndOverride<IdempotentRouteOptions | undefined>(IDEMPOTENT_ROUTE, [handler, controller]);
      route = options === undefined ? null : resolveRouteOptions(this.settings, options, `${controller.name}.${handler.name}`, controller);
      routes.set(handler, route);
      if (route) this.ttls.note(route.ttlMs);
    }
    return route ?? undefined;
  }
}
