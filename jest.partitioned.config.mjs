/**
 * `npm run test:partitioned`: the scenario suites on the key table partitioned by expiry
 * (scripts/test-partitioned.mjs gives them a database of their own), and test/partitioned/. The
 * main config leaves test/partitioned/ out (its suites need that table).
 */
import base from './jest.config.mjs';

export default { ...base, testPathIgnorePatterns: ['/node_modules/', '/test/pooler/'] };
