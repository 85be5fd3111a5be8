export {
  IdempotentPrisma,
  type IdempotentPrismaOptions,
  idempotentPrisma,
  type PrismaClientFactory,
} from './idempotent-prisma.js';
export { IdempotentPrismaModule } from './idempotent-prisma.module.js';
export { IdempotentPrismaPg, type PrismaPgOptions } from './idempotent-prisma-pg.js';
export type { PrismaClientLike } from './self-check.js';
