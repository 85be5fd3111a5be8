export default async function globalTeardown() {
  await Promise.all((globalThis.__TEST_SERVICES__ ?? []).map((container) => container.stop()));
  await globalThis.__TEST_DATABASE__?.stop();
}
