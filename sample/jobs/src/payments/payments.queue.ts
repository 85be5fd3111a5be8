/** The queue's name: `payments`, or PAYMENTS_QUEUE's (the check names one per run). */
export const PAYMENTS_QUEUE = process.env.PAYMENTS_QUEUE ?? 'payments';
