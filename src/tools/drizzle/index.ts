export { IdempotentDrizzle } from './idempotent-drizzle.js';
