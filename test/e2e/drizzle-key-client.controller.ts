import { Controller, HttpCode, InternalServerErrorException, Param, Post, Req, UseGuards } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import { Idempotent } from '../../src/index.js';
import type { IdempotentDrizzle } from '../../src/tools/drizzle/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { hold } from '../support/latch.js';

/** What a write the handler left running met, by caller. */
export const lateWrites = new Map<string, string>();

const insert = (caller: string, amount: number) =>
  sql`INSERT INTO payments (caller, amount, currency) VALUES (${caller}, ${amount}, 'EUR')`;

/** Query texts a handler may send through Drizzle after one write of its own, by name. */
const RAW: Record<string, (caller: string) => string> = {
  'one-message': (caller) =>
    `BEGIN; INSERT INTO payments (caller, amount, currency) VALUES ('${caller}', 2, 'EUR'); COMMIT`,
  'write-then-commit': (caller) =>
    `INSERT INTO payments (caller, amount, currency) VALUES ('${caller}', 2, 'EUR'); /* done */ COMMIT`,
  'commit-and-chain': () => 'COMMIT AND CHAIN',
  'do-block': (caller) =>
    `DO $$ BEGIN INSERT INTO payments (caller, amount, currency) VALUES ('${caller}', 2, 'EUR'); END $$`,
};

/** Routes that use Drizzle, bound to the key's transaction, the ways a handler may misuse it. */
export function drizzleKeyClientController(drizzle: IdempotentDrizzle) {
  @Controller('drizzle')
  @UseGuards(BearerAuthGuard)
  class DrizzleKeyClientController {
    /** Writes, then a transaction inside that writes and fails (caught): its write only is undone. */
    @Post('inner-failure')
    @Idempotent()
    async innerFailure(@Req() request: AuthenticatedRequest): Promise<{ ok: true }> {
      const db = drizzle.db;
      await db.execute(insert(request.user.id, 1));
      await db
        .transaction(async (tx) => {
          await tx.execute(insert(request.user.id, 2));
          throw new Error('inner failure');
        })
        .catch(() => undefined);
      return { ok: true };
    }

    /** Writes, then commits by hand: refused, so the request fails and nothing is kept. */
    @Post('commit')
    @Idempotent()
    async commit(@Req() request: AuthenticatedRequest): Promise<{ ok: true }> {
      await drizzle.db.execute(insert(request.user.id, 1));
      await named(drizzle.db.execute(sql`COMMIT`));
      return { ok: true };
    }

    /** Writes, then sends one of `RAW`'s query texts as it is. */
    @Post('raw/:text')
    @Idempotent()
    async raw(@Req() request: AuthenticatedRequest, @Param('text') text: string): Promise<{ ok: true }> {
      await drizzle.db.execute(insert(request.user.id, 1));
      await named(drizzle.db.execute(sql.raw(RAW[text](request.user.id))));
      return { ok: true };
    }

    /** Writes, catches a failed statement and answers 202, which the route does not store. */
    @Post('accepted-after-failed-statement')
    @Idempotent({ storeResponse: (status) => status !== 202 && status < 500 })
    @HttpCode(202)
    async acceptedAfterFailedStatement(@Req() request: AuthenticatedRequest): Promise<{ ok: true }> {
      await drizzle.db.execute(insert(request.user.id, 1));
      await drizzle.db.execute(sql`SELECT 1 / 0`).catch(() => undefined);
      return { ok: true };
    }

    /** A transaction at SERIALIZABLE inside the key's READ COMMITTED one: refused. */
    @Post('serializable')
    @Idempotent()
    async serializable(@Req() request: AuthenticatedRequest): Promise<{ ok: true }> {
      await named(
        drizzle.db.transaction((tx) => tx.execute(insert(request.user.id, 1)), { isolationLevel: 'serializable' }),
      );
      return { ok: true };
    }

    /**
     * Answers, and leaves a write running that comes after the key's transaction ended: it is sent
     * once the test releases the caller's latch.
     */
    @Post('late')
    @Idempotent()
    late(@Req() request: AuthenticatedRequest): { ok: true } {
      const db = drizzle.db;
      const caller = request.user.id;
      void hold(caller)
        .then(() => db.execute(insert(caller, 3)))
        .then(
          () => lateWrites.set(caller, 'written'),
          (error: Error) => lateWrites.set(caller, reason(error)),
        );
      return { ok: true };
    }
  }
  return DrizzleKeyClientController;
}

/** The error a call failed with, as a 500 whose detail is its reason. */
function named<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: Error) => {
    throw new InternalServerErrorException(reason(error));
  });
}

/** Drizzle wraps a failed query's error (`Failed query: …`): the reason is its cause's message. */
function reason(error: Error): string {
  return (error.cause as Error | undefined)?.message ?? error.message;
}
