// An ESM app with a CommonJS dependency, as a process of its own: the app imports the package
// (the ESM build: the module, @Idempotent(), IdempotencyTransaction), its ledger library requires
// it (the CommonJS build: @IdempotencyManager(), its own IdempotencyTransaction). Each request
// writes three payments, one through each copy's way in; `"fail": true` then throws.
// Prints "listening on <url>" once it listens. Decorators are applied by hand (plain JavaScript).
import 'reflect-metadata';
import { Body, Controller, Inject, Injectable, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { createRequire } from 'node:module';
import * as esm from 'nestjs-pg-idempotency';

const cjs = createRequire(import.meta.url)('nestjs-pg-idempotency');
if (cjs.IdempotencyTransaction === esm.IdempotencyTransaction)
  throw new Error('one build loaded: this app proves nothing');

const INSERT = 'INSERT INTO payments (caller, amount, currency) VALUES ($1, $2, $3)';

class Ledger {
  constructor(tx) {
    this.tx = tx;
  }
  async write(caller, amount) {
    await this.tx.manager.query(INSERT, [caller, amount, 'EUR']);
    return this.tx.isActive;
  }
}
Injectable()(Ledger);
Inject(cjs.IdempotencyTransaction)(Ledger, undefined, 0);

class LedgerModule {}
Module({ providers: [Ledger, cjs.IdempotencyTransaction], exports: [Ledger] })(LedgerModule);

class DualController {
  constructor(tx, ledger) {
    this.tx = tx;
    this.ledger = ledger;
  }
  async pay(manager, body) {
    const ledgerInTransaction = await this.ledger.write(body.caller, 3);
    await this.tx.manager.query(INSERT, [body.caller, 1, 'EUR']);
    await manager.query(INSERT, [body.caller, 2, 'EUR']);
    if (body.fail) throw new Error('the payment provider failed');
    return { esm: this.tx.isActive, cjs: ledgerInTransaction };
  }
}
Controller('dual')(DualController);
Inject(esm.IdempotencyTransaction)(DualController, undefined, 0);
Inject(Ledger)(DualController, undefined, 1);
const pay = Object.getOwnPropertyDescriptor(DualController.prototype, 'pay');
Object.defineProperty(
  DualController.prototype,
  'pay',
  Reflect.decorate([Post(), esm.Idempotent()], DualController.prototype, 'pay', pay) ?? pay,
);
cjs.IdempotencyManager()(DualController.prototype, 'pay', 0);
Body()(DualController.prototype, 'pay', 1);

class AppModule {}
Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL, extra: { max: 4 } }),
    esm.IdempotencyModule.forRoot({ sweepInterval: 0, caller: (request) => request.body?.caller }),
    LedgerModule,
  ],
  controllers: [DualController],
})(AppModule);

const app = await NestFactory.create(AppModule, { logger: ['error'] });
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${app.getHttpServer().address().port}`);
