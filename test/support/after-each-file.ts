import { closeSql } from './database.js';

// Every suite's SQL pool is closed after its last test, whichever helpers it used.
afterAll(() => closeSql());
