import type { InProgressKey, KeyReport, StateCount } from '../console/key-console.js';

/** A table of `rows` under `headers`, columns padded to their widest cell. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** Milliseconds as the largest whole unit that fits: `850ms`, `42s`, `17m`, `3h`, `2d`. */
export function age(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1_000, 's'],
  ];
  for (const [size, unit] of units) if (ms >= size) return `${Math.floor(ms / size)}${unit}`;
  return `${ms}ms`;
}

export function keyRows(rows: KeyReport[]): string {
  return table(
    ['ENDPOINT', 'STATE', 'STATUS', 'AGE', 'EXPIRES', 'FINGERPRINT'],
    rows.map((row) => [
      row.endpoint,
      row.expired ? `${row.state} (expired)` : row.tombstone ? `${row.state} (tombstone)` : row.state,
      row.status === null ? '-' : String(row.status),
      age(row.ageMs),
      row.expiresAt,
      row.fingerprint.slice(0, 16),
    ]),
  );
}

export function inProgressRows(rows: InProgressKey[]): string {
  return table(
    ['CALLER', 'KEY', 'ENDPOINT', 'AGE', 'LEASE UNTIL'],
    rows.map((row) => [row.caller, row.key, row.endpoint, age(row.ageMs), row.lockedUntil ?? '-']),
  );
}

export function countRows(rows: StateCount[]): string {
  return table(
    ['STATE', 'EXPIRED', 'ROWS'],
    rows.map((row) => [row.state, row.expired ? 'yes' : 'no', String(row.rows)]),
  );
}
