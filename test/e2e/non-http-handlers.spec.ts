import { IdempotencyConfigurationError, MisplacedDecoratorError } from '../../src/index.js';
import { bootstrapFailure, startLab } from '../support/apps.js';
import { HybridController, MessageHandlerController, PaymentsResolver } from './non-http-handlers.controllers.js';

describe('@Idempotent() on a handler that is not an HTTP route fails the bootstrap', () => {
  it.each([
    ['a @MessagePattern() handler', { controllers: [MessageHandlerController] }, 'MessageHandlerController.create'],
    [
      'an @EventPattern() handler in an @Idempotent() class',
      { controllers: [HybridController] },
      'HybridController.settled',
    ],
    [
      "a provider's method (a service's: no GraphQL mutation)",
      { providers: [PaymentsResolver] },
      'PaymentsResolver.createPayment',
    ],
  ])('%s: a MisplacedDecoratorError naming it', async (_case, setup, handler) => {
    const failure = await bootstrapFailure(startLab({}, setup));
    expect(failure).toBeInstanceOf(MisplacedDecoratorError);
    expect(failure).toBeInstanceOf(IdempotencyConfigurationError);
    expect((failure as Error).name).toBe('MisplacedDecoratorError');
    expect((failure as MisplacedDecoratorError).handlers).toEqual([expect.stringContaining(handler)]);
    expect((failure as Error).message).toContain('remove it');
  });
});
