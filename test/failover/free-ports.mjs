// Loopback ports for the suite's servers, so a port some other process holds never fails a run.
import { freePort } from '../../dist/esm/demo/database/free-port.js';

/** `count` distinct loopback ports nothing listens on right now (the kernel's picks, as the demo's). */
export async function freePorts(count) {
  const ports = new Set();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
