// The conformance kit under node:test (testing-kit.spec.ts runs this file).
import { test } from 'node:test';
import { checkTheDemosPayments } from './testing-kit.demo-check.mjs';

test("the demo's POST /payments keeps every promise", checkTheDemosPayments);
