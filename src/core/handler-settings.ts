import type { ExecutionSettings } from '../options/execution-settings.js';
import type { KeyTtls } from './key-ttls.js';

/**
 * The settings of every handler an entry marks, resolved once each and kept by controller class
 * and then handler (an inherited handler is one function for every subclass, each of which may
 * mark it differently); each handler's ttl is noted for the key table as it is resolved. The
 * entry's bootstrap check resolves every handler, so an invalid option fails the bootstrap.
 */
export class HandlerSettings<Settings extends ExecutionSettings> {
  private readonly byController = new WeakMap<object, WeakMap<object, Settings | null>>();

  constructor(
    private readonly ttls: KeyTtls,
    /** The handler's settings, or `undefined` for a handler the entry does not mark. */
    private readonly resolve: (controller: Function, handler: Function) => Settings | undefined,
  ) {}

  of(controller: Function, handler: Function): Settings | undefined {
    let handlers = this.byController.get(controller);
    if (!handlers) this.byController.set(controller, (handlers = new WeakMap()));
    let found = handlers.get(handler);
    if (found === undefined) {
      found = this.resolve(controller, handler) ?? null;
      handlers.set(handler, found);
      if (found) this.ttls.note(found.tombstoneMs ?? found.ttlMs);
    }
    return found ?? undefined;
  }
}
