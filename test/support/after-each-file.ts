import { closeSql } from './database.js';
import { releaseAll } from './latch.js';

// Every handler a test held on a latch goes on once the test is over, passed or failed.
afterEach(() => releaseAll());
// Every suite's SQL pool is closed after its last test, whichever helpers it used.
afterAll(() => closeSql());
