// The audit wire: serve's stderr, one JSON event a line. The reader tells
// readiness from the first event (start, or the stop of a serve that could
// not start) and hands every event on, checked: seq runs 1, 2, 3…, and each
// event's prev is the hex SHA-256 of the line before it, its exact bytes.
// A serve that predates the chain writes no prev at all: a prev that is
// missing is a break once the stream has shown one, or once the manifest
// listed the audit_chain capability.

import { createHash } from 'node:crypto';

/** The longest event line read (audit.MaxLine): a longer one is not serve's. */
export const MAX_EVENT_LINE = 4 << 20;

/** What is wrong with the stream at an event: reason is the kind of break. */
export class EventStreamError extends Error {
  /**
   * @param {'not_json' | 'seq' | 'chain' | 'too_long' | 'torn'} reason
   * @param {string} message
   */
  constructor(reason, message) {
    super(message);
    this.name = 'EventStreamError';
    this.reason = reason;
  }
}

export class EventReader {
  #onEvent;
  #ready;
  #started = false;
  #lastSeq = 0;
  #lastLink = null; // hex SHA-256 of the last line, null before the first
  #chained = false; // every event after the first must carry prev

  /**
   * @param {((event: object | null, err: EventStreamError | null) => void) | undefined} onEvent
   * @param {(err: Error | null) => void} ready called once: null at the start event
   */
  constructor(onEvent, ready) {
    this.#onEvent = onEvent;
    this.#ready = ready;
  }

  /** The manifest listed audit_chain: a missing prev is a break from now on. */
  requireChain() {
    this.#chained = true;
  }

  /** Serve started and nobody reads its events: the stream is only drained. */
  get drainOnly() {
    return this.#started && this.#onEvent === undefined;
  }

  /** @param {Buffer} line one line, without its newline */
  line(line) {
    if (this.drainOnly) return; // drained, not decoded
    let event = null;
    let err = null;
    try {
      event = JSON.parse(line.toString('utf8'));
    } catch {
      // left null below
    }
    if (event === null || typeof event !== 'object' || Array.isArray(event)) {
      event = null;
      err = new EventStreamError('not_json', `an audit line that is not a JSON object (${line.length} bytes)`);
    } else {
      err = this.#check(event);
      if (typeof event.seq === 'number') this.#lastSeq = event.seq;
    }
    this.#lastLink = createHash('sha256').update(line).digest('hex');
    if (!this.#started) this.#first(event, line);
    this.#emit(event, err);
  }

  /** The stream ended; pending is the length of a last line without its newline. */
  end(pending) {
    if (pending > 0) {
      this.#emit(null, new EventStreamError('torn', `the audit stream ends in a line without its newline (${pending} bytes)`));
    }
    if (!this.#started) {
      this.#started = true;
      const err = new Error('arca serve ended before its start event (its stderr closed)');
      err.beforeStart = true; // start adds the exit status, once there is one
      this.#ready(err);
    }
  }

  /** A line past the cap: the client stops, the stream with it. */
  tooLong(max) {
    this.#emit(null, new EventStreamError('too_long', `an audit line longer than ${max} bytes`));
  }

  #check(event) {
    const prev = event.prev;
    if (this.#lastLink === null) {
      if (prev !== undefined) return new EventStreamError('chain', `the stream's first event (seq ${event.seq}) links to a line before it`);
    } else if (prev !== undefined || this.#chained) {
      this.#chained = true;
      if (prev !== this.#lastLink) return new EventStreamError('chain', `seq ${event.seq} does not link to the line before it`);
    }
    if (event.seq !== this.#lastSeq + 1) {
      return new EventStreamError('seq', `seq ${event.seq} follows seq ${this.#lastSeq} (want ${this.#lastSeq + 1})`);
    }
    return null;
  }

  #first(event, line) {
    this.#started = true;
    if (event?.event === 'start') return this.#ready(null);
    if (event?.event === 'stop') {
      return this.#ready(new Error(`arca serve did not start: ${event.message}`));
    }
    // Before start serve has read no request, so no value can be here: the
    // line (a usage message, say) is quoted, cut short.
    const text = line.toString('utf8', 0, Math.min(line.length, 512));
    this.#ready(new Error(`arca serve wrote ${JSON.stringify(text)} before its start event`));
  }

  #emit(event, err) {
    if (this.#onEvent === undefined) return;
    try {
      this.#onEvent(event, err);
    } catch (thrown) {
      // A throwing callback must not stop the reader; the bug still surfaces.
      queueMicrotask(() => {
        throw thrown;
      });
    }
  }
}
