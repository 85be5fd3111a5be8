import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { HttpEntry } from '../http/http-entry.js';

/**
 * The interceptor `@Idempotent()` applies (and that an app may register globally, as
 * `APP_INTERCEPTOR`): it hands each request to the module's HTTP entry. Nest builds it in the
 * module of the controller it serves; it needs nothing of that module but a way to the entry, so
 * `IdempotencyModule` exports only what apps inject.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private entry?: HttpEntry;

  constructor(private readonly moduleRef: ModuleRef) {}

  intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> | Observable<unknown> {
    return (this.entry ??= this.moduleRef.get(HttpEntry, { strict: false })).intercept(context, next);
  }
}
