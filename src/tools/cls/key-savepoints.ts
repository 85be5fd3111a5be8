import { ClsServiceManager } from 'nestjs-cls';
import type { HandlerSavepoint } from '../../hosts/database-host.js';

/** The handler's savepoint of the key's transaction, in the CLS store of the handler's scope. */
const HANDLER_SAVEPOINT = Symbol.for('nestjs-pg-idempotency.handler-savepoint');

/**
 * Set in the CLS store of a savepoint of the key's transaction (TypeORM hands a savepoint the
 * key's own EntityManager, so the manager cannot tell the calls inside that they are not the
 * outermost).
 */
const IN_SAVEPOINT = Symbol.for('nestjs-pg-idempotency.in-savepoint');

/** Keeps the handler's savepoint in the CLS store of the handler's scope (called inside it). */
export function keepHandlerSavepoint(savepoint: HandlerSavepoint): void {
  ClsServiceManager.getClsService().set(HANDLER_SAVEPOINT, savepoint);
}

/** The handler's savepoint of the key's transaction the calling code runs in. */
export function handlerSavepoint(): HandlerSavepoint | undefined {
  return ClsServiceManager.getClsService().get(HANDLER_SAVEPOINT);
}

/** Marks the CLS store of the savepoint being entered (called inside it). */
export function markSavepoint(): void {
  ClsServiceManager.getClsService().set(IN_SAVEPOINT, true);
}

/** Whether the calling code runs inside a savepoint of the key's transaction. */
export function inSavepoint(): boolean {
  return ClsServiceManager.getClsService().get(IN_SAVEPOINT) === true;
}
