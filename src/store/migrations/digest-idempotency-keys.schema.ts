/**
 * The digesting migration: rewrites every row that names its scope in clear to name it as
 * `storage.keys: 'digest'` does (`scoped-key.ts`): `key` becomes `sha256:` and the hex SHA-256 of
 * the caller's UTF-8 length (4 bytes, big-endian), the caller and the key (`keyDigest`); `caller`
 * becomes `''`; `endpoint` becomes `sha256:` and the hex SHA-256 of the endpoint. Rows already digested are left as they are, so it is safe to re-run. It
 * is one-way: a digest cannot be turned back into its key. PostgreSQL 11 or later (`sha256()`),
 * on a database whose encoding is UTF8. Plain and partitioned tables alike.
 */
export const DIGEST_IDEMPOTENCY_KEYS: readonly string[] = [
  `UPDATE idempotency_keys
SET key = 'sha256:' || encode(sha256(int4send(octet_length(caller)) || convert_to(caller, 'UTF8') || convert_to(key, 'UTF8')), 'hex'),
    caller = '',
    endpoint = 'sha256:' || encode(sha256(convert_to(endpoint, 'UTF8')), 'hex')
WHERE NOT (caller = '' AND key LIKE 'sha256:%' AND endpoint LIKE 'sha256:%')`,
];
