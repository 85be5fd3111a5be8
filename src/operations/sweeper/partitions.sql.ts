import type { SqlStatement } from '../../hosts/database-host.js';
import type { Partition } from './partition-plan.js';
import { SWEEP_LOCK_ID } from './sweep.sql.js';

/**
 * How long a partition's creation or drop waits for a lock on the table: requests that arrive
 * meanwhile queue behind it, so they wait no longer than this (then the step gives up, and the
 * next sweep tries again).
 */
export const PARTITION_LOCK_TIMEOUT_MS = 100;

/**
 * The partitions of `idempotency_keys`, with their bounds in ms since 1970 (`null` for MINVALUE,
 * MAXVALUE, and both for a DEFAULT partition; a bound within a millisecond widens the range to the
 * millisecond), and the database's `now()`.
 */
export const LIST_PARTITIONS: SqlStatement = {
  name: 'nestjs_pg_idempotency_list_partitions_v1',
  types: [],
  whole: true,
  text: `
SELECT floor(extract(epoch FROM now()) * 1000)::float8 AS now_ms,
       coalesce(json_agg(json_build_object(
         'name', p.name,
         'fromMs', floor(extract(epoch FROM (p.from_bound)[1]::timestamptz) * 1000)::float8,
         'toMs', ceil(extract(epoch FROM (p.to_bound)[1]::timestamptz) * 1000)::float8)), '[]') AS partitions
FROM (
  SELECT c.relname AS name,
         regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)') AS from_bound,
         regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)') AS to_bound
  FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
  WHERE i.inhparent = to_regclass('idempotency_keys')
) AS p`,
};

/**
 * Tables the module named as its partitions that are no longer attached to `idempotency_keys`: a
 * partition detached by a sweep that stopped before it dropped it.
 */
export const LIST_DETACHED: SqlStatement = {
  name: 'nestjs_pg_idempotency_list_detached_v1',
  types: [],
  whole: true,
  text: `
SELECT coalesce(json_agg(c.relname), '[]') AS names
FROM pg_class AS c
WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass('idempotency_keys'))
  AND c.relkind = 'r' AND NOT c.relispartition AND c.relname ~ '^idempotency_keys_p[0-9]{8}t[0-9]{6}$'`,
};

/** The SQLSTATE of a maintenance step that found the sweep lock taken (another instance sweeps). */
export const SWEEP_LOCK_TAKEN = 'IK001';

/**
 * One transaction that finds the table's schema, gives up locks after
 * `PARTITION_LOCK_TIMEOUT_MS` (SQLSTATE 55P03), and fails with `SWEEP_LOCK_TAKEN` unless it takes
 * the sweep lock: one instance maintains the table at a time.
 */
function maintenance(name: string, body: string): SqlStatement {
  return {
    name,
    types: [],
    whole: true,
    text: `
DO $idempotency$
DECLARE
  parent regclass := to_regclass('idempotency_keys');
  schema text := (SELECT n.nspname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE c.oid = to_regclass('idempotency_keys'));
  part regclass;
  live boolean;
BEGIN
  PERFORM set_config('lock_timeout', '${PARTITION_LOCK_TIMEOUT_MS}ms', true);
  IF parent IS NULL THEN RETURN; END IF;
  IF NOT pg_try_advisory_xact_lock(${SWEEP_LOCK_ID}) THEN
    RAISE EXCEPTION 'another instance is sweeping idempotency_keys' USING ERRCODE = '${SWEEP_LOCK_TAKEN}';
  END IF;
${body}
END
$idempotency$`,
  };
}

/**
 * Creates `partitions` (names and bounds from `planPartitions`), each one not there yet, as a
 * table of its own attached to `idempotency_keys`: attaching takes only a SHARE UPDATE EXCLUSIVE
 * lock on the table, which live requests never wait for.
 */
export function createPartitions(partitions: readonly Partition[]): SqlStatement {
  const steps = partitions.map(({ name, fromMs, toMs }) => {
    const bounds = `FOR VALUES FROM (%L) TO (%L)', parent, schema, '${name}', '${new Date(fromMs!).toISOString()}', '${new Date(toMs!).toISOString()}'`;
    return `  IF to_regclass(format('%I.%I', schema, '${name}')) IS NULL THEN
    EXECUTE format('CREATE TABLE %I.%I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', schema, '${name}', parent);
    EXECUTE format('ALTER TABLE %s ATTACH PARTITION %I.%I ${bounds});
  END IF;`;
  });
  return maintenance('nestjs_pg_idempotency_create_partitions', steps.join('\n'));
}

/**
 * Under an ACCESS EXCLUSIVE lock on `idempotency_keys` held for this transaction only, detaches
 * the partition `name` unless it is no longer attached (another instance's sweep, planned from the
 * same listing, detached it first) or a lease in it still runs (found through the partial index of running
 * leases, not by reading the partition): a catalogue change. The lock on the table comes first:
 * every request's statements lock every partition (a lookup by key cannot prune them), so a lock
 * on the partition taken first would wait on them while they wait on it. The detached table is dropped by `dropDetached`, in a transaction of its own,
 * where removing its files keeps no request waiting.
 */
export function detachPartition(name: string): SqlStatement {
  return maintenance(
    'nestjs_pg_idempotency_detach_partition',
    `  part := to_regclass(format('%I.%I', schema, '${name}'));
  IF part IS NULL THEN RETURN; END IF;
  EXECUTE format('LOCK TABLE ONLY %s IN ACCESS EXCLUSIVE MODE', parent);
  IF NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = part AND inhparent = parent) THEN RETURN; END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s AS k WHERE k.state = %L AND k.locked_until > now())', part, 'in_progress') INTO live;
  IF live THEN RETURN; END IF;
  EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, part);`,
  );
}

/** Drops the table `name` if it is one of the module's partitions detached from `idempotency_keys`. */
export function dropDetached(name: string): SqlStatement {
  return maintenance(
    'nestjs_pg_idempotency_drop_detached',
    `  part := to_regclass(format('%I.%I', schema, '${name}'));
  IF part IS NULL OR (SELECT relispartition FROM pg_class WHERE oid = part) THEN RETURN; END IF;
  EXECUTE format('DROP TABLE %s', part);`,
  );
}
