import { createHash } from 'node:crypto';
import type { OutcomeOwner, StoredOutcomes } from '../protect/stored-outcomes.js';

/** A staged message's payload and headers, as a relay publishes them. */
export interface MessageContent {
  payload: Buffer;
  headers: Record<string, string>;
}

/** The outbox row a message is sealed to: its id, publisher and destination. */
export interface MessageAddress {
  messageId: string;
  publisher: string;
  destination: string;
}

const NO_FINGERPRINT = Buffer.alloc(0);
/** The status a message's sealed content carries (its outcome-shaped layout needs one). */
const MESSAGE_STATUS = 200;

/**
 * The `headers` (JSON text) and `payload` columns of a message, as the key table's outcomes are
 * stored (`storage.encryption`): in clear, the headers as name-value pairs and the payload's
 * bytes; sealed, `{"sealedWith": id}` and the sealed headers and payload, bound to the message's
 * id, publisher and destination (a sealed payload copied into another row fails its tag).
 */
export function messageColumns(
  outcomes: StoredOutcomes,
  address: MessageAddress,
  content: MessageContent,
): [headers: string, payload: Buffer] {
  const response = { status: MESSAGE_STATUS, headers: Object.entries(content.headers), body: content.payload };
  return outcomes.columns(response, ownerOf(address), NO_FINGERPRINT);
}

/** The content a message's row holds; throws `UnreadableOutcomeError` when it cannot be opened. */
export function messageContent(
  outcomes: StoredOutcomes,
  address: MessageAddress,
  row: { headers: unknown; payload: Buffer },
): MessageContent {
  const read = outcomes.read(
    { status: MESSAGE_STATUS, response_headers: row.headers, response_body: row.payload, fingerprint: NO_FINGERPRINT },
    ownerOf(address),
  );
  return { payload: read.body, headers: Object.fromEntries(read.headers) };
}

function ownerOf({ messageId, publisher, destination }: MessageAddress): OutcomeOwner {
  return {
    digest: createHash('sha256').update(`outbox\0${messageId}`).digest(),
    endpointDigest: createHash('sha256').update(`${publisher}\0${destination}`).digest(),
  };
}
