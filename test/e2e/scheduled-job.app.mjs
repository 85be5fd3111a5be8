// A Nest app whose @nestjs/schedule cron fires every SLOT_SECONDS (default 2) in every instance,
// as a process of its own. Each tick runs its slot's work once across instances through
// IdempotencyService.run(): the key is the slot (the tick's time rounded to the nearest slot), the
// work one payment for the caller RUN whose amount is the slot (seconds since 1970), written
// through the host HOST (../support/app-hosts.mjs; default 'drizzle'), held HOLD_MS after the
// write so that the instances' ticks overlap. GET /ticks answers the ticks so far; GET /ticks/final stops its ticking (later ticks run
// nothing), waits for the ticks in flight to end, then answers { slot: [outcome kinds] } of this
// process's ticks (a tick late by half a slot or more names the next slot). Prints "listening on <url>".
import 'reflect-metadata';
import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { IdempotencyService } from 'nestjs-pg-idempotency';
import { hostOf } from '../support/app-hosts.mjs';
import { decorate } from '../support/decorate.mjs';

const env = process.env;
const chosen = await hostOf(env.HOST ?? 'drizzle');
const slotMs = Number(env.SLOT_SECONDS ?? 2) * 1000;
const holdMs = Number(env.HOLD_MS ?? 300);
let app;
const ticks = {};
let stopped = false;
const inFlight = new Set();

class SlotJob {
  async tick() {
    if (stopped) return;
    const running = runSlot();
    inFlight.add(running);
    try {
      await running;
    } finally {
      inFlight.delete(running);
    }
  }
}

/** One tick's slot, run through the module once across instances, its outcome kind recorded. */
async function runSlot() {
  // Rounded, not floored: a tick that fires a little early or late still names its own slot.
  const slot = Math.round(Date.now() / slotMs) * slotMs;
  const result = await app
    .get(IdempotencyService)
    .run({ scope: 'slot-payment', key: new Date(slot).toISOString(), caller: env.RUN, ttl: '1h' }, async () => {
      await chosen.pay(app, { caller: env.RUN, amount: slot / 1000 });
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      return { slot };
    });
  (ticks[slot / 1000] ??= []).push(result.kind);
}
Injectable()(SlotJob);
decorate(SlotJob, 'tick', [Cron(`*/${slotMs / 1000} * * * * *`)], []);

class TicksController {
  current() {
    return ticks;
  }

  async final() {
    stopped = true;
    await Promise.allSettled([...inFlight]);
    return ticks;
  }
}
Controller('ticks')(TicksController);
decorate(TicksController, 'current', [Get()], []);
decorate(TicksController, 'final', [Get('final')], []);

class AppModule {}
Module({
  imports: [...chosen.imports, ScheduleModule.forRoot()],
  providers: [SlotJob],
  controllers: [TicksController],
})(AppModule);

app = await NestFactory.create(AppModule, { logger: ['error'] });
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${app.getHttpServer().address().port}`);
