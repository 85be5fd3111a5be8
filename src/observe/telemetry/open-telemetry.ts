/**
 * The part of `@opentelemetry/api` the module uses, typed here so that the peer stays optional:
 * nothing of it is imported unless it is installed (`IdempotencyTelemetry` loads it at bootstrap).
 */
export interface OtelApi {
  trace: {
    getTracer(name: string, version?: string): OtelTracer;
    setSpan(context: unknown, span: OtelSpan): unknown;
    getActiveSpan(): OtelSpan | undefined;
  };
  context: { active(): unknown; with<T>(context: unknown, run: () => T): T };
  metrics: { getMeter(name: string, version?: string): OtelMeter };
  SpanStatusCode: { ERROR: number };
}

export type Attributes = Record<string, string | number | boolean>;

export interface OtelTracer {
  startSpan(name: string, options: { attributes?: Attributes }, context?: unknown): OtelSpan;
}

export interface OtelSpan {
  setAttributes(attributes: Attributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

export interface OtelMeter {
  createCounter(
    name: string,
    options: { description: string; unit?: string },
  ): { add(value: number, attributes?: Attributes): void };
  createHistogram(
    name: string,
    options: { description: string; unit?: string },
  ): { record(value: number, attributes?: Attributes): void };
}
