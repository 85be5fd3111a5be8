/**
 * A transaction tool of the app's (`@nestjs-cls/transactional`) pointed at the key's transaction
 * while a handler runs: `start()` starts the handler (it returns what it returns), inside a scope
 * where the tool's "current transaction" is `handle`; the scope ends once `settled` resolves.
 */
export type HandlerScope = <T>(handle: unknown, start: () => T, settled: Promise<void>) => T;

/**
 * The handler scopes registered for a database object (a TypeORM DataSource), kept on
 * `globalThis` so that both builds of the package (ESM and CommonJS) in one app share them.
 */
const SCOPES = Symbol.for('nestjs-pg-idempotency.handler-scopes.v1');

type ScopesHolder = { [SCOPES]?: WeakMap<object, HandlerScope> };

const scopes: WeakMap<object, HandlerScope> = ((globalThis as ScopesHolder)[SCOPES] ??= new WeakMap());

/** Registers `scope` for the key transactions opened on `database`. */
export function setHandlerScope(database: object, scope: HandlerScope): void {
  scopes.set(database, scope);
}

/** The scope registered for `database`, if any. */
export function handlerScopeOf(database: object): HandlerScope | undefined {
  return scopes.get(database);
}
