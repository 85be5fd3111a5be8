-- nestjs-pg-idempotency: rewrites idempotency_keys' keys as digests, before starting the app with
-- storage: { keys: 'digest' }, while no instance serves (docs/storage.md). Generated from
-- src/store/migrations/digest-idempotency-keys.schema.ts by `npm run build`; safe to re-run; one-way.

UPDATE idempotency_keys
SET key = 'sha256:' || encode(sha256(int4send(octet_length(caller)) || convert_to(caller, 'UTF8') || convert_to(key, 'UTF8')), 'hex'),
    caller = '',
    endpoint = 'sha256:' || encode(sha256(convert_to(endpoint, 'UTF8')), 'hex')
WHERE NOT (caller = '' AND key LIKE 'sha256:%' AND endpoint LIKE 'sha256:%');
