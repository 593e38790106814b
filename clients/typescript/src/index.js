// @arca-secrets/client: a client of arca serve (protocol arca-serve/1).
export { Client, PROTOCOL } from './client.js';
export { Secret } from './secret.js';
export { ApprovalDeniedError, ApprovalRequiredError, ArcaError, ClosedError, ConflictError, ExpiredError } from './errors.js';
export { EventStreamError } from './events.js';
export { scrubStream } from './scrub.js';
