import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { MessageEntry } from './message-entry.js';

/**
 * The interceptor `@IdempotentMessage()` applies: it hands each delivery to the module's message
 * entry. Nest builds it in the module of the controller it serves; it needs nothing of that module
 * but a way to the entry, so `IdempotencyModule` exports only what apps inject.
 */
@Injectable()
export class IdempotentMessageInterceptor implements NestInterceptor {
  private entry?: MessageEntry;

  constructor(private readonly moduleRef: ModuleRef) {}

  intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    return (this.entry ??= this.moduleRef.get(MessageEntry, { strict: false })).intercept(context, next);
  }
}
