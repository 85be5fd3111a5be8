/** DI token of the demo's configuration. */
export const DEMO_CONFIG = Symbol('DEMO_CONFIG');

/** The demo's settings, read from the environment by `demoConfigFromEnv()`. */
export interface DemoConfig {
  port: number;
  databaseUrl?: string;
  ttlSeconds: number;
  sweepIntervalMs: number;
  latencyMs: number;
  /** Delay of the simulated provider's answer (DEMO_PROVIDER_LATENCY_MS). */
  providerLatencyMs: number;
  /** The refund route's lease (DEMO_LEASE_SECONDS). */
  leaseSeconds: number;
}

export function demoConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  return {
    port: integer(env.PORT, 3000, 'PORT'),
    databaseUrl: env.DATABASE_URL || undefined,
    ttlSeconds: integer(env.IDEMPOTENCY_TTL_SECONDS, 86_400, 'IDEMPOTENCY_TTL_SECONDS'),
    sweepIntervalMs: integer(env.IDEMPOTENCY_SWEEP_INTERVAL_MS, 60_000, 'IDEMPOTENCY_SWEEP_INTERVAL_MS'),
    latencyMs: integer(env.DEMO_LATENCY_MS, 0, 'DEMO_LATENCY_MS'),
    providerLatencyMs: integer(env.DEMO_PROVIDER_LATENCY_MS, 0, 'DEMO_PROVIDER_LATENCY_MS'),
    leaseSeconds: integer(env.DEMO_LEASE_SECONDS, 30, 'DEMO_LEASE_SECONDS') || 30,
  };
}

function integer(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return parsed;
}
