import { Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { HandlerSettings } from '../core/handler-settings.js';
import { KeyTtls } from '../core/key-ttls.js';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENT_ROUTE } from '../idempotency.constants.js';
import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import { naming } from '../options/checks.js';
import type { IdempotentRouteOptions } from '../options/route-options.js';
import { type IdempotencySettings, resolveRouteOptions, type RouteSettings } from '../options/settings.js';
import { aMutationKeySource, type MutationKeySource } from './mutation-key-source.js';

/** An `@Idempotent()` mutation's settings, with where it reads its key. */
export interface MutationSettings extends RouteSettings {
  readonly keySource: MutationKeySource;
}

/** The options about an HTTP request and response, which a mutation has no use for. */
const HTTP_ONLY = ['fingerprint', 'storeResponse', 'maxResponseBytes', 'wait', 'redact'] as const;

/** The metadata keys under which `@nestjs/graphql` marks a resolver method: its root type (`'Mutation'`, `'Query'`…), or a field resolver. */
const RESOLVER_TYPE_METADATA = 'graphql:resolver_type';
const RESOLVE_PROPERTY_METADATA = 'graphql:resolve_property';

/**
 * What kind of GraphQL resolver method `handler` is: `'Mutation'`, `'Query'`, `'Subscription'`,
 * `'Field'` (a `@ResolveField()`), or `undefined` for none.
 */
export function resolverTypeOf(handler: Function): string | undefined {
  if (Reflect.getMetadata(RESOLVE_PROPERTY_METADATA, handler) === true) return 'Field';
  return Reflect.getMetadata(RESOLVER_TYPE_METADATA, handler) as string | undefined;
}

/** The settings of every `@Idempotent()` mutation (by method or by class), resolved once (`HandlerSettings`). */
@Injectable()
export class IdempotentMutations {
  private readonly mutations: HandlerSettings<MutationSettings>;

  constructor(@Inject(IDEMPOTENCY_SETTINGS) settings: IdempotencySettings, reflector: Reflector, ttls: KeyTtls) {
    this.mutations = new HandlerSettings(ttls, (resolver, handler) => {
      if (resolverTypeOf(handler) !== 'Mutation') return undefined;
      const options = reflector.getAllAndOverride<IdempotentRouteOptions | undefined>(IDEMPOTENT_ROUTE, [
        handler,
        resolver,
      ]);
      if (!options) return undefined;
      const name = `${resolver.name}.${handler.name}`;
      const keySource = naming(`@Idempotent() on ${name}`, () => {
        const unused = HTTP_ONLY.filter((option) => options[option] !== undefined);
        if (unused.length > 0)
          throw new IdempotencyConfigurationError(
            `${unused.map((option) => `"${option}"`).join(', ')}: an option of HTTP routes, not of a GraphQL mutation (its fingerprint is its arguments, its result the field's value)`,
          );
        return aMutationKeySource(options.keyFrom);
      });
      return { ...resolveRouteOptions(settings, options, name, resolver), keySource };
    });
  }

  /** The mutation's settings; `undefined` for a resolver method that is no `@Idempotent()` mutation. */
  of(resolver: Function, handler: Function): MutationSettings | undefined {
    return this.mutations.of(resolver, handler);
  }
}
