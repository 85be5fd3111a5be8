// A Nest app receiving Stripe and GitHub webhooks exactly once, as a process of its own. Each
// receiver checks the provider's signature with the provider's SDK in a guard, on the raw body
// (`rawBody: true`), before the key is reserved, and writes one payment through the host HOST
// (../support/app-hosts.mjs; default 'drizzle'). Duplicates in flight wait for the first
// (`wait`), so every delivery is answered 200.
// - POST /webhooks/stripe: Stripe.webhooks.constructEvent with STRIPE_WEBHOOK_SECRET; the key is
//   the event's id (`keyFrom: { body: 'id' }`), the caller 'stripe'. The payment is the event's
//   data.object { payer, amount }; data.object.holdMs: holds that long after the write;
//   data.object.fail === 'once': throws after the write the first time this process sees the
//   event; data.object.kill: SIGKILLs itself after the write, unless SURVIVES=1.
// - POST /webhooks/github: @octokit/webhooks' verify with GITHUB_WEBHOOK_SECRET on
//   X-Hub-Signature-256; the key is X-GitHub-Delivery, the caller 'github'; the body
//   { payer, amount } is the payment.
// Prints "listening on <url>".
import 'reflect-metadata';
import { BadRequestException, Controller, HttpCode, Module, Post, Req, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Webhooks } from '@octokit/webhooks';
import { Idempotent } from 'nestjs-pg-idempotency';
import Stripe from 'stripe';
import { hostOf } from '../support/app-hosts.mjs';
import { decorate } from '../support/decorate.mjs';

const env = process.env;
const chosen = await hostOf(env.HOST ?? 'drizzle');
let app;
const mayDie = env.SURVIVES !== '1';
const github = new Webhooks({ secret: env.GITHUB_WEBHOOK_SECRET });
const failedOnce = new Set();

class StripeSignature {
  canActivate(context) {
    const request = context.switchToHttp().getRequest();
    try {
      request.stripeEvent = Stripe.webhooks.constructEvent(
        request.rawBody,
        request.headers['stripe-signature'],
        env.STRIPE_WEBHOOK_SECRET,
      );
    } catch (error) {
      throw new BadRequestException(`Stripe signature refused: ${error.message}`);
    }
    return true;
  }
}

class GitHubSignature {
  async canActivate(context) {
    const request = context.switchToHttp().getRequest();
    const signature = request.headers['x-hub-signature-256'];
    if (typeof signature !== 'string' || !(await github.verify(request.rawBody.toString('utf8'), signature)))
      throw new BadRequestException('GitHub signature refused');
    return true;
  }
}

class WebhooksController {
  async stripe(request) {
    const event = request.stripeEvent;
    const payment = event.data.object;
    await chosen.pay(app, { caller: payment.payer, amount: payment.amount });
    if (payment.holdMs) await new Promise((resolve) => setTimeout(resolve, payment.holdMs));
    if (payment.fail === 'once' && !failedOnce.has(event.id)) {
      failedOnce.add(event.id);
      throw new Error(`event ${event.id} fails once`);
    }
    if (payment.kill && mayDie) process.kill(process.pid, 'SIGKILL');
    return { received: event.id };
  }

  async github(request) {
    await chosen.pay(app, { caller: request.body.payer, amount: request.body.amount });
    return { received: request.headers['x-github-delivery'] };
  }
}
Controller('webhooks')(WebhooksController);
decorate(
  WebhooksController,
  'stripe',
  [
    Post('stripe'),
    HttpCode(200),
    UseGuards(StripeSignature),
    Idempotent({ keyFrom: { body: 'id' }, caller: 'stripe', keyFormat: /evt_[A-Za-z0-9]+/, wait: '30s' }),
  ],
  [Req()],
);
decorate(
  WebhooksController,
  'github',
  [
    Post('github'),
    HttpCode(200),
    UseGuards(GitHubSignature),
    Idempotent({ keyFrom: { header: 'X-GitHub-Delivery' }, caller: 'github', wait: '30s' }),
  ],
  [Req()],
);

class AppModule {}
Module({ imports: chosen.imports, controllers: [WebhooksController] })(AppModule);

app = await NestFactory.create(AppModule, { rawBody: true, logger: ['error'] });
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${app.getHttpServer().address().port}`);
