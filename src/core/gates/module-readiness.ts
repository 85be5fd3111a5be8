import { Injectable, Logger } from '@nestjs/common';

/** How long a key waits for the module before a warning says why it still waits. */
const SLOW_READY_WARNING_MS = 10_000;

/**
 * Whether the module is ready to reserve keys: its host resolved and its key table prepared, at
 * the application's bootstrap. A transport that starts consuming before that (a hybrid app's
 * `startAllMicroservices()` before `listen()`) has its messages wait here, not fail.
 */
@Injectable()
export class ModuleReadiness {
  private readonly logger = new Logger('Idempotency');
  private opened = false;
  private open!: () => void;
  private readonly ready = new Promise<void>((resolve) => (this.open = resolve));

  /** Opens the module to keys (once the application's bootstrap prepared it). */
  markReady(): void {
    this.opened = true;
    this.open();
  }

  /** Whether the module is open to keys. */
  get isReady(): boolean {
    return this.opened;
  }

  /** `undefined` once ready; until then, a promise that resolves when the module is. */
  whenReady(): Promise<void> | undefined {
    if (this.opened) return undefined;
    const warning = setTimeout(() => {
      this.logger.warn(
        `a key has waited ${SLOW_READY_WARNING_MS / 1000} s for the application to bootstrap: a consumer or a call that starts ` +
          'before app.init() waits until it has; awaiting it inside an onModuleInit() hook never returns (use onApplicationBootstrap())',
      );
    }, SLOW_READY_WARNING_MS).unref();
    return this.ready.finally(() => clearTimeout(warning));
  }
}
