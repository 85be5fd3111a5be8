// The request every bench client sends: POST /payments with this body, as a caller (the demo's
// bearer token names the caller, so each scenario's rows are countable) and maybe a key.
export const PAYMENT_BODY = JSON.stringify({ amount: 1250, currency: 'EUR' });

export function paymentHeaders(token, key) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  if (key) headers['idempotency-key'] = key;
  return headers;
}
