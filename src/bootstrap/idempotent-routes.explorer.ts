import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IDEMPOTENT_MESSAGE, IDEMPOTENT_ROUTE } from '../idempotency.constants.js';
import { IdempotentMessageHandlers } from '../messages/idempotent-message-handlers.js';
import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import {
  IdempotentHandlersError,
  MisplacedDecoratorError,
  SafeMethodRouteError,
  UnreplayableRouteError,
} from './idempotent-handlers.errors.js';
import { IdempotentRoutes } from '../http/idempotent-routes.js';
import { IdempotentMutations, resolverTypeOf } from '../graphql/idempotent-mutations.js';
import { PATH_METADATA, PATTERN_METADATA } from '../http/route-check/nest-route-metadata.js';
import { unreplayableReason } from '../http/route-check/unreplayable-route.js';
import { safeMethodOf } from '../http/route-check/safe-method.js';

/**
 * Checks every controller and provider at bootstrap, so that `app.init()` / `app.listen()` fails
 * instead of the route's first request:
 * - `@Idempotent()` on a handler that is not an HTTP route (a message pattern, a provider's
 *   method), or `@IdempotentMessage()` on one that is not a message pattern:
 *   {@link MisplacedDecoratorError}, naming each;
 * - `@Idempotent()` on a GET, HEAD or OPTIONS route: {@link SafeMethodRouteError} (by class, such
 *   routes are passed by);
 * - an `@Idempotent()` route (by method or by class) whose responses cannot be replayed:
 *   {@link UnreplayableRouteError}, naming each such route and how to fix it;
 * - an invalid route option: the option's error.
 * Every handler is checked before any error is thrown: one of them alone is thrown as it is,
 * several as an {@link IdempotentHandlersError} that names each.
 * Each route's settings are resolved here, once, into `IdempotentRoutes`, and each message
 * handler's into `IdempotentMessageHandlers`.
 */
@Injectable()
export class IdempotentRoutesExplorer implements OnModuleInit {
  constructor(
    private readonly routes: IdempotentRoutes,
    private readonly messages: IdempotentMessageHandlers,
    private readonly mutations: IdempotentMutations,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    /** Each handler's invalid option, collected so that one boot names every one. */
    const invalid: IdempotencyConfigurationError[] = [];
    const resolving = (resolve: () => unknown): void => {
      try {
        resolve();
      } catch (error) {
        if (!(error instanceof IdempotencyConfigurationError)) throw error;
        invalid.push(error);
      }
    };
    const notHttp = this.markedProviderMethods(resolving);
    const problems: string[] = [];
    const safeRoutes: string[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as Function | undefined;
      if (!controller?.prototype) continue;
      for (const name of this.scanner.getAllMethodNames(controller.prototype)) {
        const handler = controller.prototype[name];
        if (Reflect.getMetadata(IDEMPOTENT_MESSAGE, handler) !== undefined) {
          if (Reflect.getMetadata(PATTERN_METADATA, handler) === undefined)
            notHttp.push(
              `${controller.name}.${name} (@IdempotentMessage() on a handler that is no @MessagePattern() / @EventPattern())`,
            );
          else resolving(() => this.messages.of(controller, handler));
          continue;
        }
        if (this.reflector.getAllAndOverride(IDEMPOTENT_ROUTE, [handler, controller]) === undefined) continue;
        if (Reflect.getMetadata(PATTERN_METADATA, handler) !== undefined) {
          notHttp.push(
            `${controller.name}.${name} (a @MessagePattern() / @EventPattern() handler: mark it @IdempotentMessage())`,
          );
          continue;
        }
        // By class, @Idempotent() covers the routes; the controller's other methods are not handlers.
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) {
          if (this.reflector.get(IDEMPOTENT_ROUTE, handler) !== undefined)
            notHttp.push(`${controller.name}.${name} (not a route)`);
          continue;
        }
        const reason = unreplayableReason(controller, name);
        // By class, its safe routes are passed by; by method, refused (an unreplayable one is told as such).
        const safe = reason ? undefined : safeMethodOf(handler);
        if (safe !== undefined) {
          if (this.reflector.get(IDEMPOTENT_ROUTE, handler) !== undefined)
            safeRoutes.push(`${controller.name}.${name} (@${safe}())`);
          continue;
        }
        resolving(() => this.routes.of(controller, handler));
        if (reason) problems.push(`${controller.name}.${name}: ${reason}`);
      }
    }
    if (notHttp.length > 0) invalid.push(new MisplacedDecoratorError(notHttp));
    if (safeRoutes.length > 0) invalid.push(new SafeMethodRouteError(safeRoutes));
    if (problems.length > 0) invalid.push(new UnreplayableRouteError(problems));
    if (invalid.length === 1) throw invalid[0];
    if (invalid.length > 1) throw new IdempotentHandlersError(invalid);
  }

  /**
   * The methods of providers (not controllers) that `@Idempotent()` marks, by method or by class,
   * that are no GraphQL mutation. A mutation's settings are resolved here; by class,
   * `@Idempotent()` covers a resolver's mutations and passes its queries and fields by.
   */
  private markedProviderMethods(resolving: (resolve: () => unknown) => void): string[] {
    const marked: string[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const type = (wrapper.instance as object | undefined)?.constructor;
      if (typeof type !== 'function' || type === Object || !type.prototype) continue;
      const byClass = this.reflector.get(IDEMPOTENT_ROUTE, type) !== undefined;
      for (const name of this.scanner.getAllMethodNames(type.prototype)) {
        const method = type.prototype[name];
        if (typeof method !== 'function') continue;
        const byMethod = this.reflector.get(IDEMPOTENT_ROUTE, method) !== undefined;
        if (!byClass && !byMethod) continue;
        const resolverType = resolverTypeOf(method);
        if (resolverType === 'Mutation') resolving(() => this.mutations.of(type, method));
        else if (resolverType !== undefined) {
          if (byMethod)
            marked.push(
              `${type.name}.${name} (a GraphQL ${resolverType === 'Field' ? 'field resolver' : resolverType.toLowerCase()}: only a mutation changes anything)`,
            );
        } else if (!byClass || !this.isResolverClass(type)) {
          marked.push(`${type.name}.${name} (a provider's method: a gateway or a service, not a GraphQL mutation)`);
        }
      }
    }
    return marked;
  }

  /** Whether `type` holds GraphQL resolver methods (so `@Idempotent()` on it covers its mutations). */
  private isResolverClass(type: Function): boolean {
    return this.scanner
      .getAllMethodNames(type.prototype)
      .some((name) => resolverTypeOf(type.prototype[name]) !== undefined);
  }
}
