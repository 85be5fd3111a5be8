/**
 * Gates between a test and the handlers of its in-process app, by name: a handler `pass()`es a
 * gate (it says it is there, then waits until the test opens it); the test waits until a handler
 * `isThere()`, then `open()`s it.
 */
interface Gate {
  there: Promise<void>;
  arrive(): void;
  opened: Promise<void>;
  open(): void;
}

const gates = new Map<string, Gate>();

function gate(name: string): Gate {
  let found = gates.get(name);
  if (!found) {
    const made = {} as Gate;
    made.there = new Promise<void>((resolve) => (made.arrive = resolve));
    made.opened = new Promise<void>((resolve) => (made.open = resolve));
    gates.set(name, (found = made));
  }
  return found;
}

/** A handler's side: says it is at the gate, and resolves once the test opens it. */
export function pass(name: string): Promise<void> {
  const found = gate(name);
  found.arrive();
  return found.opened;
}

/** The test's side: resolves once a handler is at the gate. */
export function isThere(name: string): Promise<void> {
  return gate(name).there;
}

/** The test's side: lets the handler at the gate go on. */
export function open(name: string): void {
  gate(name).open();
}
