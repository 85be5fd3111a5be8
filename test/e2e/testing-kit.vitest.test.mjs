// The conformance kit under Vitest (testing-kit.spec.ts runs this file).
import { test } from 'vitest';
import { checkTheDemosPayments } from './testing-kit.demo-check.mjs';

test("the demo's POST /payments keeps every promise", checkTheDemosPayments, 60_000);
