// What both bench servers share: the SQL round-trip counter, the listen step and the control
// channel (Node IPC with the orchestrator, so that no bench-only route sits in the measured app).
import 'reflect-metadata';
import pg from 'pg';
import { answer } from '../processes.mjs';

/**
 * Counts SQL round trips by wrapping `pg.Client.prototype.query`, the one call through which
 * TypeORM (and so the library) sends every statement, BEGIN/COMMIT/ROLLBACK included. node-pg
 * sends one statement per round trip (no pipelining), so calls = round trips. Per statement it
 * also sums the time from the call to its result (the round trip, the server's work and any
 * wait in the client's queue). The library's code is untouched; this lives in the bench server.
 */
const counter = { total: 0, byStatement: new Map() };
const labels = new Map();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config, values, callback) {
  const text = typeof config === 'string' ? config : config?.text;
  const result = query.call(this, config, values, callback);
  if (typeof text === 'string') {
    counter.total += 1;
    const label = labelOf(text);
    let entry = counter.byStatement.get(label);
    if (!entry) counter.byStatement.set(label, (entry = { count: 0, ms: 0 }));
    entry.count += 1;
    if (typeof result?.then === 'function') {
      const started = performance.now();
      const done = () => void (entry.ms += performance.now() - started);
      result.then(done, done);
    }
  }
  return result;
};

/**
 * The label of `text`, cached per statement text. Statements that carry their values inline
 * (`START TRANSACTION; EXECUTE name ('…')`, `EXECUTE name (…); COMMIT`) are unique per request:
 * they are labelled from their first words, never cached, so the cache stays bounded and this
 * instrumentation costs the same per statement on every server.
 */
function labelOf(text) {
  if (/^\s*(?:START TRANSACTION|EXECUTE|PREPARE)\b/i.test(text)) return inlineLabel(text);
  let label = labels.get(text);
  if (!label) {
    label = statementLabel(text);
    if (labels.size < 10_000) labels.set(text, label);
  }
  return label;
}

/** `BEGIN + EXECUTE reserve_v1`, `EXECUTE complete_v1 + COMMIT`: the parts of a combined statement. */
function inlineLabel(text) {
  const parts = [];
  for (const [, verb, name] of text.matchAll(
    /(?:^|;)\s*(START TRANSACTION|BEGIN|COMMIT|ROLLBACK|EXECUTE|PREPARE)\b\s*(\w*)/gi,
  )) {
    const upper = verb.toUpperCase();
    if (upper === 'PREPARE') continue;
    parts.push(upper === 'START TRANSACTION' ? 'BEGIN' : upper === 'EXECUTE' ? `EXECUTE ${name}` : upper);
  }
  return parts.join(' + ') || 'PREPARE';
}

/** A short name for a statement: `BEGIN`, `INSERT payments`, `reserve (WITH … ON CONFLICT)` … */
export function statementLabel(text) {
  const sql = text.trim().replace(/\s+/g, ' ');
  const verb = sql.split(' ', 1)[0].toUpperCase();
  if (verb === 'START' || verb === 'BEGIN') return 'BEGIN';
  if (verb === 'COMMIT' || verb === 'ROLLBACK') return verb;
  if (verb === 'SELECT' && /pg_(try_)?advisory_(un)?lock\(/.test(sql)) return 'SELECT advisory lock/unlock (sweeper)';
  if (verb === 'WITH' && /\bDELETE FROM idempotency_keys\b/.test(sql)) return 'DELETE idempotency_keys';
  if (verb === 'WITH' && sql.includes('pg_try_advisory_xact_lock'))
    return 'record: WITH try-lock, INSERT … ON CONFLICT';
  const table = /\b(?:INTO|UPDATE|FROM)\s+"?([\w.]+)"?/i.exec(sql)?.[1];
  return table ? `${verb} ${table}` : verb;
}

/**
 * Listens on a free loopback port, reports `ready` with it, then answers the orchestrator's
 * commands: `reset` and `stats` of the counters (SQL round trips, HTTP responses finished by
 * this server; `onReset` is told of each reset), `close`, and the server's own `commands`.
 */
export async function serve(app, commands = {}, { onReset } = {}) {
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer();
  let responses = 0;
  server.on('request', (_request, response) => response.once('finish', () => (responses += 1)));
  const { port } = server.address();
  process.once('SIGTERM', () => void app.close().finally(() => process.exit(0)));
  const handlers = {
    reset() {
      counter.total = 0;
      counter.byStatement.clear();
      responses = 0;
      onReset?.();
      return {};
    },
    stats() {
      return { queries: counter.total, responses, byStatement: Object.fromEntries(counter.byStatement) };
    },
    async close() {
      await app.close();
      setImmediate(() => process.exit(0));
      return {};
    },
    ...commands,
  };
  answer(handlers, { port });
}

/** The settings every bench server reads from its environment. */
export function serverEnv() {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('bench server: DATABASE_URL is not set');
  return { databaseUrl, latencyMs: Number(process.env.DEMO_LATENCY_MS ?? 0) };
}
