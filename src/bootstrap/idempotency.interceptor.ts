import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { GraphqlEntry } from '../graphql/graphql-entry.js';
import { HttpEntry } from '../http/http-entry.js';

/**
 * The interceptor `@Idempotent()` applies (and that an app may register globally, as
 * `APP_INTERCEPTOR`): it hands each HTTP request to the module's HTTP entry and each GraphQL
 * field to its GraphQL entry. Nest builds it in the module of the controller or resolver it
 * serves; it needs nothing of that module but a way to the entries, so `IdempotencyModule`
 * exports only what apps inject.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private http?: HttpEntry;
  private graphql?: GraphqlEntry;

  constructor(private readonly moduleRef: ModuleRef) {}

  intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> | Observable<unknown> {
    switch (context.getType<string>()) {
      case 'http':
        return (this.http ??= this.moduleRef.get(HttpEntry, { strict: false })).intercept(context, next);
      case 'graphql':
        return (this.graphql ??= this.moduleRef.get(GraphqlEntry, { strict: false })).intercept(context, next);
      default:
        return next.handle();
    }
  }
}
