import { Controller, Injectable, Post } from '@nestjs/common';
import { EventPattern, MessagePattern } from '@nestjs/microservices';
import { Idempotent } from '../../src/index.js';

/** A microservice message handler marked @Idempotent(): nothing would deduplicate it. */
@Controller()
export class MessageHandlerController {
  @MessagePattern('payments.create')
  @Idempotent()
  create(): object {
    return { paid: true };
  }
}

/** An event handler in an @Idempotent() class that also has an HTTP route (a hybrid app). */
@Controller('hybrid')
@Idempotent()
export class HybridController {
  @Post()
  pay(): object {
    return { paid: true };
  }

  @EventPattern('payments.settled')
  settled(_event: unknown): void {}
}

/** A provider's method marked @Idempotent() that is no GraphQL mutation (test/e2e/graphql.spec.ts has those). */
@Injectable()
export class PaymentsResolver {
  @Idempotent()
  createPayment(): object {
    return { paid: true };
  }
}
