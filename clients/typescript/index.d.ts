// The types of @arca-secrets/client, by hand; the wire's own types are
// generated from arca's schemas into src/protocol.d.ts and used here.

import type * as Wire from './src/protocol.js';
import { Ops, type FieldOptions, type RequestFields } from './src/ops.js';

export type * from './src/protocol.js';

/** The protocol this client speaks: its major version is the package's. */
export declare const PROTOCOL: 'arca-serve/1';

/**
 * A secret value: prints as `<redacted>` in toString, template strings,
 * JSON.stringify and util.inspect; reveal() gives the text.
 */
export declare class Secret {
  constructor(value: string);
  /**
   * The text. A value got under a grant (its result carries expires_at) is
   * dropped at expires_at: then this throws ExpiredError; fetch it again.
   */
  reveal(): string;
  /** When the value is dropped (the end of the grant it was got under), or undefined when never. */
  readonly expiresAt: Date | undefined;
  toString(): '<redacted>';
  toJSON(): '<redacted>';
}

/** A PDP's verdict, on a response and its audit event. */
export type Policy = Wire.WirePolicy;

/** The error codes of arca-serve/1; a newer serve may add one. */
export type ErrorCode = Wire.WireError['error']['code'];

/** What an error says beside its code: upstream_failed's cause, conflict's current_version. */
export type ErrorDetails = NonNullable<Wire.WireError['error']['details']>;

/** A request serve refused or failed. Branch on code, never on message. */
export declare class ArcaError extends Error {
  readonly name: 'ArcaError' | 'ApprovalRequiredError' | 'ConflictError';
  readonly code: ErrorCode | (string & {});
  /** The PDP's verdict, when serve consulted it and it gave one. */
  readonly policy?: Policy;
  /**
   * What serve said beside the code, when it said something: on
   * upstream_failed, details.cause names the step of the use that failed
   * (the manifest's use capability lists them).
   */
  readonly details?: ErrorDetails;
  /** From resolve: the variable whose get failed, and its ref (the message names both). */
  readonly variable?: string;
  readonly ref?: string;
}

/** An approval serve asked for: details.approval of approval_required, expires_at a Date. */
export interface Approval {
  readonly id: string;
  /** What is asked, in words: never a value. */
  readonly summary: string;
  /** SHA-256 over actor, op, env, ref and use, in hex. */
  readonly fingerprint: string;
  /** When it expires (a deny) unless decided. */
  readonly expires_at: Date;
  /** The approval page's, when serve runs one. */
  readonly url?: string;
}

/** A request a human must approve first: retry it with { approval: approval.id } once approved. */
export declare class ApprovalRequiredError extends ArcaError {
  readonly name: 'ApprovalRequiredError';
  readonly code: 'approval_required';
  readonly approval: Approval;
}

/**
 * A write whose if_version is not the name's current version: nothing was
 * written. Read again and write again with { if_version } of what was read.
 */
export declare class ConflictError extends ArcaError {
  readonly name: 'ConflictError';
  readonly code: 'conflict';
  /** details.current_version: the version that is current (0: none). */
  readonly currentVersion: number;
}

/** withApproval's error when the approval was denied or expired. */
export declare class ApprovalDeniedError extends Error {
  readonly name: 'ApprovalDeniedError';
  readonly code: 'approval_denied';
  readonly approval: Approval;
  readonly state: 'denied' | 'expired' | (string & {});
}

/** Secret.reveal() past the end of the grant the value was got under: fetch it again. */
export declare class ExpiredError extends Error {
  readonly name: 'ExpiredError';
  readonly code: 'expired';
}

/** How withApproval waits. */
export interface WithApprovalOptions {
  /** Between polls of the approval op (default 1000). */
  intervalMs?: number;
  /** Give up (a TimeoutError) at this time, a Date or ms since the epoch. */
  deadline?: Date | number;
  /** Give up with signal.reason; passed to each poll too. */
  signal?: AbortSignal;
  /** The clock, for a test (default Date.now). */
  now?: () => number;
  /** The wait between polls, for a test (default a timer that ends with signal). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
}

/** A call made or in flight when serve is gone; cause says why, when known. */
export declare class ClosedError extends Error {
  readonly name: 'ClosedError';
  readonly code: 'closed';
  /** From resolve: the variable whose get failed, and its ref (the message names both). */
  readonly variable?: string;
  readonly ref?: string;
}

/** A break in the audit stream, handed to onEvent with the event at it. */
export declare class EventStreamError extends Error {
  readonly name: 'EventStreamError';
  readonly reason: 'not_json' | 'seq' | 'chain' | 'too_long' | 'torn';
}

/** One audit event as serve wrote it; fields this build does not know are kept. */
export type Event = Wire.WireEvent & Record<string, unknown>;

/**
 * What a call sends beside its op and the fields it requires, and how long
 * it may take: every request field an op may have (FieldOptions, generated
 * from the manifest into src/ops.d.ts), these three said of here.
 */
export interface CallOptions extends FieldOptions {
  /** The env of the request (a ref's pin wins over it). */
  env?: string;
  /** The claimed actor: audited, passed to the PDP, never verified. */
  actor?: string;
  /** An opaque identity claim for the PDP; only its SHA-256 is audited. */
  attestation?: string;
  /** Rejects the call at once with signal.reason; its slot stays on the wire. */
  signal?: AbortSignal;
  /** Rejects the call with a TimeoutError after this long; its slot stays. */
  timeoutMs?: number;
}

/** A success's result carries the verdict when the PDP gave one. */
export type WithPolicy<T> = T & { policy?: Policy };

/**
 * Each op's result type, <Op>Result (GetResult, ...), and its method, are
 * generated from the manifest's op list into src/ops.d.ts. Times are kept
 * as serve's strings: RFC 3339, UTC, 9 fractional digits. A manifest's
 * capabilities: a key absent means "this serve predates it", never false.
 */
export type * from './src/ops.js';

/** How serve exited. */
export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

export interface StartOptions {
  /** The arca binary: a path, or a name looked up in environ's PATH (default "arca"). */
  binary?: string;
  /** --config: pin the config file (else serve looks for one, ./arca.toml first). */
  config?: string;
  /** --env: the env of requests that name none. */
  env?: string;
  /**
   * serve's whole environment. Default: empty, nothing from this process;
   * pass HOME (or pin config) so serve finds its files.
   */
  environ?: Record<string, string | undefined>;
  /** serve's working directory (default: this process's). */
  cwd?: string;
  /** Requests on the wire at most; a call beyond waits (default 256). */
  maxInFlight?: number;
  /** How long start waits for the start event and the manifest (default 10000). */
  startTimeoutMs?: number;
  /** How long close waits for serve to exit before it kills it (default 5000). */
  closeTimeoutMs?: number;
  /** Abandons the start: serve is killed, start rejects with signal.reason. */
  signal?: AbortSignal;
  /**
   * Called with every audit event, in order, from the reader of serve's
   * stderr: keep it fast. err is set where the stream breaks (a seq gap, a
   * broken chain, a line that is not JSON, when event is null).
   */
  onEvent?: (event: Event | null, err: EventStreamError | null) => void;
}

/** One arca serve process. Safe for any number of concurrent calls; a method for each op comes from Ops. */
export declare class Client extends Ops {
  private constructor();
  /** Spawn serve, wait for its start event, check its protocol. */
  static start(options?: StartOptions): Promise<Client>;
  /** serve's process id. */
  readonly pid: number;
  /** Requests written and not yet answered. */
  readonly inFlight: number;
  /** Calls waiting for room in the window. */
  readonly waiting: number;

  /** Any op by name; a string value in the result comes as a Secret. */
  call(op: string, fields?: RequestFields, options?: Pick<CallOptions, 'signal' | 'timeoutMs'>): Promise<WithPolicy<Record<string, unknown>>>;
  /**
   * Run call(undefined); when it rejects with ApprovalRequiredError, poll
   * the approval until it is decided (bounded by its expires_at and the
   * options), then run call(id) and return its result; a denied or expired
   * approval rejects with ApprovalDeniedError.
   */
  withApproval<T>(call: (approval: string | undefined) => Promise<T>, options?: WithApprovalOptions): Promise<T>;
  /** Every ref of refs at once, pipelined; the first failure rejects. */
  resolve<K extends string>(refs: Record<K, string>, base?: CallOptions): Promise<Record<K, Secret>>;
  /** Close stdin, wait for serve to exit, kill it after closeTimeoutMs. */
  close(): Promise<ExitStatus>;
}

/**
 * A Transform an agent host pipes a tool's output through: each chunk goes
 * to serve as the next chunk of the scrub stream named stream, and the text
 * comes out with every value the session released redacted. The end of the
 * input ends the stream. redactions counts the placeholders, by ref.
 */
export declare function scrubStream(client: Client, stream: string, options?: { env?: string }): import('node:stream').Transform & {
  redactions: Map<string, number>;
  unscrubbable: string[];
};
