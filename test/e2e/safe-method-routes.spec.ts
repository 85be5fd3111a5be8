import { Controller, Get, Head, Options, Post } from '@nestjs/common';
import {
  IdempotencyConfigurationError,
  Idempotent,
  IdempotentHandlersError,
  MisplacedDecoratorError,
  SafeMethodRouteError,
} from '../../src/index.js';
import { MessageHandlerController } from './non-http-handlers.controllers.js';
import { appsOn, bootstrapFailure, HTTP_PLATFORMS } from '../support/apps.js';
import { newKey, send } from '../support/http.js';

@Controller('safe-get')
class KeyedGetController {
  @Get()
  @Idempotent()
  list() {
    return [];
  }
}

@Controller('safe-head')
class KeyedHeadController {
  @Head()
  @Idempotent()
  check() {
    return undefined;
  }
}

@Controller('safe-options')
class KeyedOptionsController {
  @Options()
  @Idempotent()
  describe() {
    return {};
  }
}

/** A route whose option is invalid. */
@Controller('bad-option')
class BadOptionController {
  @Post()
  @Idempotent({ ttl: 'soon' as never })
  create() {
    return {};
  }
}

/** A controller keyed as a whole: its POST is keyed, its GET passes by. */
@Controller('orders')
@Idempotent({ caller: 'orders-test' })
class OrdersController {
  private readonly orders: object[] = [];

  @Get()
  list() {
    return this.orders;
  }

  @Post()
  create() {
    const order = { id: this.orders.length + 1 };
    this.orders.push(order);
    return order;
  }
}

describe('@Idempotent() on a GET, HEAD or OPTIONS route', () => {
  const { startLab } = appsOn('express');
  it.each([
    ['@Get()', KeyedGetController, 'KeyedGetController.list (@Get())'],
    ['@Head()', KeyedHeadController, 'KeyedHeadController.check (@Head())'],
    ['@Options()', KeyedOptionsController, 'KeyedOptionsController.describe (@Options())'],
  ])('%s: the bootstrap fails with a SafeMethodRouteError naming the route', async (_case, controller, route) => {
    const failure = await bootstrapFailure(startLab({}, { controllers: [controller] }));
    expect(failure).toBeInstanceOf(SafeMethodRouteError);
    expect(failure).toBeInstanceOf(IdempotencyConfigurationError);
    expect((failure as SafeMethodRouteError).routes).toEqual([route]);
    expect((failure as Error).message).toContain('remove it from these routes');
  });
});

describe('several misuses in one app', () => {
  const { startLab } = appsOn('express');
  it('one boot names every one: an IdempotentHandlersError holding each error as it would be thrown alone', async () => {
    const failure = await bootstrapFailure(
      startLab({}, { controllers: [KeyedGetController, BadOptionController, MessageHandlerController] }),
    );
    expect(failure).toBeInstanceOf(IdempotentHandlersError);
    const { errors, message } = failure as IdempotentHandlersError;
    expect(errors.map((error) => error.constructor)).toEqual([
      IdempotencyConfigurationError,
      MisplacedDecoratorError,
      SafeMethodRouteError,
    ]);
    expect(message).toContain('3 problems');
    expect(message).toContain('BadOptionController.create');
    expect(message).toContain('KeyedGetController.list (@Get())');
    expect(message).toContain('MessageHandlerController.create');
  });
});

describe.each(HTTP_PLATFORMS)('on %s, a controller marked @Idempotent() as a whole', (platform) => {
  const { startLab } = appsOn(platform);
  it('keys its POST and passes its GET by (no key asked, nothing recorded)', async () => {
    const lab = await startLab({}, { controllers: [OrdersController] });
    try {
      const caller = null;
      expect((await send(`${lab.url}/orders`, { caller, body: {} })).status).toBe(400);
      const key = newKey();
      const created = await send(`${lab.url}/orders`, { key, caller, body: {} });
      const again = await send(`${lab.url}/orders`, { key, caller, body: {} });
      expect(created.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      const listed = await send(`${lab.url}/orders`, { method: 'GET', caller });
      expect(listed.status).toBe(200);
      expect(listed.json).toEqual([{ id: 1 }]);
      expect(listed.headers['idempotent-replayed']).toBeUndefined();
    } finally {
      await lab.close();
    }
  });
});
