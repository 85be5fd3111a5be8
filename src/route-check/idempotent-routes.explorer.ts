import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENT_ROUTE } from '../idempotency.constants.js';
import { UnreplayableRouteError } from '../idempotency.errors.js';
import { type IdempotencySettings, type IdempotentRouteOptions, resolveRouteOptions } from '../idempotency.options.js';
import { unreplayableReason } from './unreplayable-route.js';

/**
 * Checks every controller at bootstrap: an `@Idempotent()` route (by method or by class) whose
 * responses cannot be replayed fails `app.init()` / `app.listen()` with an
 * {@link UnreplayableRouteError} naming each such route and how to fix it; an invalid route
 * option fails it with the option's error, instead of the route's first request.
 */
@Injectable()
export class IdempotentRoutesExplorer implements OnModuleInit {
  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const problems: string[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as Function | undefined;
      if (!controller?.prototype) continue;
      for (const name of this.scanner.getAllMethodNames(controller.prototype)) {
        const handler = controller.prototype[name];
        const options = this.reflector.getAllAndOverride<IdempotentRouteOptions | undefined>(IDEMPOTENT_ROUTE, [
          handler,
          controller,
        ]);
        if (options === undefined) continue;
        resolveRouteOptions(this.settings, options, `${controller.name}.${name}`, controller);
        const reason = unreplayableReason(controller, name);
        if (reason) problems.push(`${controller.name}.${name}: ${reason}`);
      }
    }
    if (problems.length > 0) throw new UnreplayableRouteError(problems);
  }
}
