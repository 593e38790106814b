// The errors a call can end with. Their messages name ops, codes, sizes and
// limits, never a value: serve's own messages never hold one, and the
// client's never quote a line it read (a response line may hold a value).

/**
 * A request serve refused or failed: the wire's code and message, and its
 * details when it gave some (upstream_failed: details.cause, the step of
 * the use that failed). Not cause: that is the standard error's chain.
 */
export class ArcaError extends Error {
  /**
   * @param {string} code the wire's error.code: branch on it, never on message
   * @param {string} message serve's error.message
   * @param {object | undefined} policy the PDP's verdict, when it gave one
   * @param {object | undefined} details the wire's error.details, when an object
   */
  constructor(code, message, policy, details) {
    super(message);
    this.name = 'ArcaError';
    this.code = code;
    if (policy !== undefined) this.policy = policy;
    if (details !== null && typeof details === 'object' && !Array.isArray(details)) this.details = details;
  }
}

/**
 * The ArcaError of a request a human must approve first (code
 * approval_required): approval is serve's details.approval, its expires_at
 * a Date. Retry the request with { approval: approval.id } once it is
 * approved; client.withApproval does all of it.
 */
export class ApprovalRequiredError extends ArcaError {
  constructor(message, policy, details) {
    super('approval_required', message, policy, details);
    this.name = 'ApprovalRequiredError';
    const a = details.approval;
    this.approval = Object.freeze({
      id: a.id,
      summary: a.summary,
      fingerprint: a.fingerprint,
      expires_at: new Date(a.expires_at),
      ...(typeof a.url === 'string' ? { url: a.url } : {}),
    });
  }
}

/**
 * The ArcaError of a write whose if_version is not the name's current
 * version (code conflict): nothing was written. currentVersion is serve's
 * details.current_version, the version that is current (0: none). Read
 * again, and write again with { if_version } of what was read: a
 * compare-and-set (the README shows the loop).
 */
export class ConflictError extends ArcaError {
  constructor(message, policy, details) {
    super('conflict', message, policy, details);
    this.name = 'ConflictError';
    this.currentVersion = details.current_version;
  }
}

/**
 * The ArcaError of a failed response: an ApprovalRequiredError when it
 * names an approval, a ConflictError when it names the current version.
 */
export function errorOf(code, message, policy, details) {
  const a = details?.approval;
  if (code === 'approval_required' && a !== null && typeof a === 'object' && typeof a.id === 'string' && typeof a.expires_at === 'string') {
    return new ApprovalRequiredError(message, policy, details);
  }
  const current = details?.current_version;
  if (code === 'conflict' && Number.isSafeInteger(current) && current >= 0) {
    return new ConflictError(message, policy, details);
  }
  return new ArcaError(code, message, policy, details);
}

/**
 * The error of withApproval when the approval it waited for was denied or
 * expired: state says which, approval is the ApprovalRequiredError's.
 */
export class ApprovalDeniedError extends Error {
  constructor(approval, state) {
    super(`approval ${approval.id} was ${state}`);
    this.name = 'ApprovalDeniedError';
    this.code = 'approval_denied';
    this.approval = approval;
    this.state = state;
  }
}

/**
 * What reveal() throws once the grant a value was got under has ended (its
 * result's expires_at): the value was dropped; fetch it again.
 */
export class ExpiredError extends Error {
  constructor() {
    super("the value's grant has ended: fetch it again");
    this.name = 'ExpiredError';
    this.code = 'expired';
  }
}

/**
 * A call made, or in flight, when serve is gone (it exited, was killed, was
 * closed, or the client stopped it because the wire broke: cause says why).
 */
export class ClosedError extends Error {
  constructor(message = 'arca serve is gone', options) {
    super(message, options);
    this.name = 'ClosedError';
    this.code = 'closed';
  }
}

/** The reason a call whose timeoutMs passed rejects with, as AbortSignal.timeout's. */
export function timeoutError(ms) {
  return new DOMException(`the call timed out after ${ms} ms`, 'TimeoutError');
}

/**
 * The error of resolve when the get of one variable failed: err, its class,
 * code and policy kept, with a message that names the variable and its ref
 * first, as the Go client's does ("DB (arca://app/db): …"). variable and ref
 * say the same as fields; cause is err. An error of another kind (one a
 * caller's signal gave) is returned as it is.
 */
export function forVariable(variable, ref, err) {
  const prefix = `${variable} (${typeof ref === 'string' ? ref : typeof ref}): `;
  let out;
  if (err instanceof ArcaError) out = errorOf(err.code, prefix + err.message, err.policy, err.details);
  else if (err instanceof ClosedError) out = new ClosedError(prefix + err.message);
  else if (err instanceof TypeError) out = new TypeError(prefix + err.message);
  else if (err instanceof RangeError) out = new RangeError(prefix + err.message);
  else if (err instanceof DOMException && err.name === 'TimeoutError') out = new DOMException(prefix + err.message, err.name);
  else return err;
  Object.defineProperty(out, 'cause', { value: err, writable: true, configurable: true });
  out.variable = variable;
  out.ref = ref;
  return out;
}
