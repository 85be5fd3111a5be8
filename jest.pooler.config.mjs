/**
 * `npm run test:pooler`: the suites that run behind a real PgBouncer in transaction mode
 * (scripts/test-pooler.mjs starts it and sets APP_DATABASE_URL), and test/pooler/, which starts
 * PgBouncers of its own. The main config leaves test/pooler/ out (it needs the pgbouncer binary).
 */
import base from './jest.config.mjs';

export default { ...base, testPathIgnorePatterns: ['/node_modules/', '/test/partitioned/'] };
