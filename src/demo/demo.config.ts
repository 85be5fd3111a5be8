import type { StorageOptions } from '../options/module-options.js';
import { type HttpPlatform, isHttpPlatform } from './http/http-platform.js';

/** DI token of the demo's configuration. */
export const DEMO_CONFIG = Symbol('DEMO_CONFIG');

/** The demo's settings, read from the environment by `demoConfigFromEnv()`. */
export interface DemoConfig {
  port: number;
  /** `DEMO_PLATFORM`: `express` (default) or `fastify`. */
  platform: HttpPlatform;
  databaseUrl?: string;
  ttlSeconds: number;
  sweepIntervalMs: number;
  latencyMs: number;
  /** Delay of the simulated provider's answer (DEMO_PROVIDER_LATENCY_MS). */
  providerLatencyMs: number;
  /** The refund route's lease (DEMO_LEASE_SECONDS). */
  leaseSeconds: number;
  /** Whether leases are renewed while a refund runs (DEMO_LEASE_RENEWAL: `on`, the default, or `off`). */
  leaseRenewal: boolean;
  /** Connections in the pool (DEMO_POOL_SIZE). */
  poolSize: number;
  /** How long a request waits for a free connection before failing (DEMO_POOL_TIMEOUT_MS). */
  poolTimeoutMs: number;
  /** How the module reaches TypeORM's transaction (DEMO_TYPEORM_ACCESS: `auto`, the default, or `public-api`). */
  typeormAccess?: 'auto' | 'public-api';
  /**
   * How the payment handler reaches its transaction (DEMO_TX): `typeorm` (default),
   * `IdempotencyTransaction`; `cls`, `@Transactional()` services through `@nestjs-cls/transactional`;
   * `prisma`, Prisma 7 through `IdempotentPrisma` on a node-postgres pool (no TypeORM); `cls-prisma`,
   * `@Transactional()` services through `@nestjs-cls/transactional` on that Prisma.
   */
  tx?: 'typeorm' | 'cls' | 'prisma' | 'cls-prisma';
  /**
   * What the key table stores: `IDEMPOTENCY_KEY_STORAGE` (`clear`, the default, or `digest`) and
   * `IDEMPOTENCY_ENCRYPTION_KEYS` (`id:base64key,…`, the newest first; none: outcomes in clear).
   */
  storage?: StorageOptions;
  /** How long the shutdown waits for keys in flight (IDEMPOTENCY_DRAIN_TIMEOUT_MS; the module's `drainTimeout`). */
  drainTimeoutMs?: number;
  /** `DEMO_REPLAY_CACHE`: `on` (default) or `off`, the module's in-process replay cache (`replayCache: false`). */
  replayCache?: boolean;
}

export function demoConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  return {
    port: integer(env.PORT, 3000, 'PORT'),
    platform: platform(env.DEMO_PLATFORM),
    databaseUrl: env.DATABASE_URL || undefined,
    ttlSeconds: integer(env.IDEMPOTENCY_TTL_SECONDS, 86_400, 'IDEMPOTENCY_TTL_SECONDS'),
    sweepIntervalMs: integer(env.IDEMPOTENCY_SWEEP_INTERVAL_MS, 60_000, 'IDEMPOTENCY_SWEEP_INTERVAL_MS'),
    latencyMs: integer(env.DEMO_LATENCY_MS, 0, 'DEMO_LATENCY_MS'),
    providerLatencyMs: integer(env.DEMO_PROVIDER_LATENCY_MS, 0, 'DEMO_PROVIDER_LATENCY_MS'),
    leaseSeconds: integer(env.DEMO_LEASE_SECONDS, 30, 'DEMO_LEASE_SECONDS') || 30,
    leaseRenewal: onOff(env.DEMO_LEASE_RENEWAL, true, 'DEMO_LEASE_RENEWAL'),
    poolSize: integer(env.DEMO_POOL_SIZE, 20, 'DEMO_POOL_SIZE') || 20,
    poolTimeoutMs: integer(env.DEMO_POOL_TIMEOUT_MS, 5_000, 'DEMO_POOL_TIMEOUT_MS') || 5_000,
    typeormAccess: oneOf(env.DEMO_TYPEORM_ACCESS, ['auto', 'public-api'] as const, 'DEMO_TYPEORM_ACCESS'),
    tx: oneOf(env.DEMO_TX, ['typeorm', 'cls', 'prisma', 'cls-prisma'] as const, 'DEMO_TX'),
    drainTimeoutMs: integer(env.IDEMPOTENCY_DRAIN_TIMEOUT_MS, 10_000, 'IDEMPOTENCY_DRAIN_TIMEOUT_MS'),
    replayCache: onOff(env.DEMO_REPLAY_CACHE, true, 'DEMO_REPLAY_CACHE'),
    storage: {
      keys: oneOf(env.IDEMPOTENCY_KEY_STORAGE, ['clear', 'digest'] as const, 'IDEMPOTENCY_KEY_STORAGE'),
      ...(env.IDEMPOTENCY_ENCRYPTION_KEYS
        ? { encryption: { keys: encryptionKeys(env.IDEMPOTENCY_ENCRYPTION_KEYS) } }
        : {}),
    },
  };
}

/** `id:base64key,…` as the module's encryption keys (their lengths are checked by the module). */
function encryptionKeys(value: string): { id: string; key: string }[] {
  return value.split(',').map((entry) => {
    const colon = entry.indexOf(':');
    if (colon < 1)
      throw new Error(`IDEMPOTENCY_ENCRYPTION_KEYS must be id:base64key pairs separated by commas, got "${entry}"`);
    return { id: entry.slice(0, colon).trim(), key: entry.slice(colon + 1).trim() };
  });
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], name: string): T {
  if (value === undefined || value === '') return allowed[0];
  if (allowed.includes(value as T)) return value as T;
  throw new Error(`${name} must be ${allowed.map((a) => `"${a}"`).join(' or ')}, got "${value}"`);
}

function platform(value: string | undefined): HttpPlatform {
  if (value === undefined || value === '') return 'express';
  if (!isHttpPlatform(value)) throw new Error(`DEMO_PLATFORM must be "express" or "fastify", got "${value}"`);
  return value;
}

function onOff(value: string | undefined, fallback: boolean, name: string): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'on' || value === 'off') return value === 'on';
  throw new Error(`${name} must be "on" or "off", got "${value}"`);
}

function integer(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return parsed;
}
