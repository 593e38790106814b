// A client of arca serve for embedders. It spawns serve with a pinned config
// and an explicit environment, waits for it to be ready, and sends requests
// over its stdin, pipelined. Nothing but the wire is between the caller and
// serve: the client keeps no value beyond the call that returns it.
//
// Responses come in request order, so each call takes a slot in a FIFO
// queue when its line goes out; the stdout reader hands each response to the
// slot at the head and checks the id it echoes. A call that is aborted or
// times out rejects at once but keeps its slot: its response, when it comes,
// is dropped, and later responses never shift. At most maxInFlight requests
// are on the wire; a call beyond that waits for room (backpressure), and so
// does the writer when stdin's pipe is full.

import { spawn } from 'node:child_process';
import { ClosedError, errorOf, forVariable, timeoutError } from './errors.js';
import { withApproval } from './approval.js';
import { EventReader, MAX_EVENT_LINE } from './events.js';
import { Lines, TextLines } from './lines.js';
import { FIELDS, Ops, SEND } from './ops.js';
import { MAX_RESPONSE_LINE, describeId, encodeRest, shapeResult } from './wire.js';

/** The protocol this client speaks; its major version is the package's. */
export const PROTOCOL = 'arca-serve/1';

const INTERNAL = Symbol('Client.start');
const NONE = Object.freeze({});
const FIELD_NAMES = new Set(FIELDS.map((f) => f.name));

export class Client extends Ops {
  #child;
  #max;
  #closeTimeoutMs;
  #exited; // resolves with {code, signal} once serve is gone and its pipes closed
  #events;
  #responses;

  #nextId = 0;
  #queue = []; // slots whose lines went out, in order
  #waiting = []; // calls waiting for room in the window
  #inFlight = 0; // requests on the wire: written and not yet answered
  #pending = []; // lines not yet handed to stdin
  #flushQueued = false;
  #blocked = false; // stdin's pipe is full: wait for drain
  #ending = false; // close(): end stdin once what is pending is out
  #gone = null; // the ClosedError of every later call, once serve is gone
  #closing = null;

  constructor(token, child, maxInFlight, closeTimeoutMs) {
    super();
    if (token !== INTERNAL) throw new TypeError('use Client.start() to make a Client');
    this.#child = child;
    this.#max = maxInFlight;
    this.#closeTimeoutMs = closeTimeoutMs;
    this.#exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  }

  /**
   * Spawn serve and wait until it is ready (its start event), then check
   * from the manifest that it speaks PROTOCOL. A serve that cannot start
   * rejects with its own stop message.
   */
  static async start(options = {}) {
    const o = { ...options };
    const binary = o.binary ?? 'arca';
    const args = ['serve'];
    if (o.config) args.push('--config', o.config);
    if (o.env) args.push('--env', o.env);
    const startTimeoutMs = o.startTimeoutMs ?? 10_000;
    const max = o.maxInFlight ?? 256;
    if (!(Number.isInteger(max) && max > 0)) throw new RangeError('maxInFlight must be a positive integer');
    // The child's whole environment is what the caller gives: nothing leaks
    // from this process unless it is passed on purpose.
    const child = spawn(binary, args, { env: o.environ ?? {}, cwd: o.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let spawnError = null;
    child.once('error', (err) => {
      spawnError = err;
    });
    const c = new Client(INTERNAL, child, max, o.closeTimeoutMs ?? 5000);
    // One promise, settled by whichever comes first: the first event, the
    // timeout, the caller's abort.
    const ready = new Promise((resolve, reject) => {
      const { signal } = o;
      const settle = (err) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => settle(new Error(`arca serve was not ready after ${startTimeoutMs} ms`)), startTimeoutMs);
      const onAbort = () => settle(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      c.#events = new EventReader(o.onEvent, settle);
      c.#wire(child);
      if (signal?.aborted) onAbort();
    });
    try {
      await ready;
    } catch (err) {
      // A serve whose stderr ended is exiting: its status says more than a kill.
      if (err.beforeStart) await c.#exitedWithin(1000);
      c.#kill();
      const exit = await c.#exited;
      if (spawnError) throw new Error(`cannot spawn ${binary}: ${spawnError.message}`, { cause: spawnError });
      if (err.beforeStart) {
        throw new Error(`${err.message}; ${exit.signal ? `killed by ${exit.signal}` : `exit status ${exit.code}`}`);
      }
      throw err;
    }
    let m;
    try {
      m = await c.manifest({ signal: o.signal, timeoutMs: startTimeoutMs });
    } catch (err) {
      await c.close().catch(() => {});
      throw new Error(`the manifest: ${err.message}`, { cause: err });
    }
    if (m.protocol !== PROTOCOL) {
      await c.close().catch(() => {});
      throw new Error(`arca serve speaks ${JSON.stringify(m.protocol)}, this client ${PROTOCOL}`);
    }
    // An absent capability says nothing (an older serve); a present one is a promise.
    if (m.capabilities?.audit_chain) c.#events.requireChain();
    return c;
  }

  /** serve's process id. */
  get pid() {
    return this.#child.pid;
  }

  /** Requests on the wire: written and not yet answered (cancelled ones too). */
  get inFlight() {
    return this.#inFlight;
  }

  /** Calls waiting for room in the window (maxInFlight). */
  get waiting() {
    return this.#waiting.length;
  }

  // The generated op methods (ops.js) send through this: encode returns
  // the request line after its id, or throws why it cannot be sent.
  [SEND](encode, options) {
    return this.#op(encode, options);
  }

  /**
   * Any op by name, for one this client has no method for (adding an op is
   * not a protocol change). fields: any request field but id and op.
   */
  call(op, fields = NONE, options = NONE) {
    for (const k of Object.keys(fields)) {
      if (!FIELD_NAMES.has(k)) return Promise.reject(new TypeError(`no request field ${JSON.stringify(k)}`));
    }
    return this.#op(() => encodeRest(op, FIELDS, fields), options);
  }

  /**
   * Run call, and when a human must approve it first, wait for the decision
   * and run it again with the approval's id (see approval.js).
   */
  withApproval(call, options) {
    return withApproval(this, call, options);
  }

  /**
   * Get every ref of refs (name → ref) at once, pipelined: the common case of
   * filling a child's environment. The first failure rejects, with no values,
   * naming the variable and the ref it was for (forVariable).
   */
  async resolve(refs, base = NONE) {
    const names = Object.keys(refs);
    const got = await Promise.all(
      names.map((name) =>
        this.get(refs[name], base).catch((err) => {
          throw forVariable(name, refs[name], err);
        }),
      ),
    );
    return Object.fromEntries(names.map((name, i) => [name, got[i].value]));
  }

  /**
   * End the session: close serve's stdin (EOF; requests already written
   * are answered), wait for serve to exit, and kill it when it has not
   * after closeTimeoutMs. Resolves with its exit {code, signal}.
   */
  close() {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close() {
    this.#gone ??= new ClosedError('the client was closed');
    for (const slot of this.#waiting.splice(0)) this.#settle(slot, this.#gone);
    this.#ending = true;
    this.#flush();
    const exit = await this.#exitedWithin(this.#closeTimeoutMs);
    if (exit !== null) return exit;
    // SIGTERM first, so serve kills a PDP in flight with its process group.
    this.#child.kill('SIGTERM');
    if ((await this.#exitedWithin(1000)) === null) this.#kill();
    await this.#exited;
    throw new Error(`arca serve did not exit within ${this.#closeTimeoutMs} ms: killed`);
  }

  // #exitedWithin is serve's exit status, or null when it has not exited in ms.
  async #exitedWithin(ms) {
    let timer;
    const late = new Promise((resolve) => {
      timer = setTimeout(resolve, ms, null);
    });
    const exit = await Promise.race([this.#exited, late]);
    clearTimeout(timer);
    return exit;
  }

  // #wire reads stdout and stderr and handles stdin's failures.
  #wire(child) {
    this.#responses = new TextLines(MAX_RESPONSE_LINE, (line) => this.#onResponse(line), () => {
      this.#fail(new Error(`a response line longer than ${MAX_RESPONSE_LINE} bytes`));
    });
    const events = new Lines(MAX_EVENT_LINE, (line) => this.#events.line(line), () => {
      this.#events.tooLong(MAX_EVENT_LINE);
      this.#fail(new Error(`an audit event line longer than ${MAX_EVENT_LINE} bytes`));
    });
    child.stdout.on('data', (chunk) => this.#responses.push(chunk));
    child.stdout.on('close', () => this.#lost(new ClosedError()));
    // stderr is read all the time: a full pipe would stop serve. Once serve
    // started, a client with no onEvent only drains it, as a reader that
    // discards the stream would: its lines are not split.
    child.stderr.on('data', (chunk) => {
      if (!this.#events.drainOnly) events.push(chunk);
    });
    child.stderr.on('close', () => this.#events.end(events.pending));
    // A write to a serve that is gone fails (EPIPE); its calls fail when
    // stdout ends, so the error needs nothing but to be caught.
    child.stdin.on('error', () => {});
  }

  #op(encode, options) {
    if (this.#gone) return Promise.reject(this.#gone);
    let rest;
    try {
      rest = encode();
    } catch (err) {
      return Promise.reject(err);
    }
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const slot = { id: 0, rest, resolve, reject, done: false, cleanup: null };
      if (signal || timeoutMs > 0) this.#arm(slot, signal, timeoutMs);
      if (this.#inFlight < this.#max) {
        this.#inFlight++;
        this.#send(slot);
      } else {
        this.#waiting.push(slot);
      }
    });
  }

  // #arm lets an abort or a timeout settle the call early. A slot still
  // waiting for room leaves the line; one on the wire stays in the queue.
  #arm(slot, signal, timeoutMs) {
    let timer;
    const cancel = (reason) => {
      if (slot.done) return;
      if (slot.id === 0) this.#waiting.splice(this.#waiting.indexOf(slot), 1);
      this.#settle(slot, reason);
    };
    const onAbort = () => cancel(signal.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs > 0) timer = setTimeout(() => cancel(timeoutError(timeoutMs)), timeoutMs);
    slot.cleanup = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
  }

  // #send puts the slot in the queue and its line in what the next flush
  // writes, in one step: line order and queue order are the same.
  #send(slot) {
    slot.id = ++this.#nextId;
    this.#queue.push(slot);
    this.#pending.push('{"id":' + slot.id + slot.rest);
    slot.rest = null;
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      // After this tick's microtasks: the lines of every caller that ran in
      // this tick go out in one write.
      process.nextTick(this.#flush);
    }
  }

  #flush = () => {
    this.#flushQueued = false;
    const stdin = this.#child.stdin;
    if (this.#blocked) return;
    if (this.#pending.length > 0) {
      const data = this.#pending.length === 1 ? this.#pending[0] : this.#pending.join('');
      this.#pending = [];
      if (!stdin.writable) return; // serve is gone: stdout's end fails the slots
      if (!stdin.write(data)) {
        this.#blocked = true;
        stdin.once('drain', this.#drained);
        return;
      }
    }
    if (this.#ending && stdin.writable) stdin.end();
  };

  #drained = () => {
    this.#blocked = false;
    this.#flush();
  };

  #onResponse(line) {
    const slot = this.#queue.shift();
    if (slot === undefined) {
      return this.#fail(new Error(`a response (${Buffer.byteLength(line)} bytes) with no request waiting for it: the wire is out of step`));
    }
    let resp;
    try {
      resp = JSON.parse(line);
    } catch {
      resp = undefined;
    }
    if (resp === null || typeof resp !== 'object' || Array.isArray(resp)) {
      this.#release();
      return this.#settle(slot, new Error(`a response that is not a JSON object (${Buffer.byteLength(line)} bytes)`));
    }
    // serve answers a line it could not read (too long, not valid JSON) with
    // id null: still this slot's answer, by position.
    if (resp.id !== slot.id && !(resp.id === null && resp.ok === false)) {
      this.#queue.unshift(slot);
      return this.#fail(new Error(`the response to request ${slot.id} carries id ${describeId(resp.id)}: the wire is out of step`));
    }
    this.#release();
    if (slot.done) return; // cancelled: its response is dropped
    if (resp.ok === true) {
      let result;
      try {
        result = shapeResult(resp.result ?? {}, resp.policy);
      } catch (err) {
        return this.#settle(slot, err);
      }
      slot.done = true;
      slot.cleanup?.();
      return slot.resolve(result);
    }
    const e = resp.error;
    if (resp.ok === false && e !== null && typeof e === 'object' && typeof e.code === 'string') {
      return this.#settle(slot, errorOf(e.code, String(e.message ?? ''), resp.policy, e.details));
    }
    this.#settle(slot, new Error('a response that is neither a success nor an error'));
  }

  // #release frees the window place of a request that was answered, giving
  // it to the first call waiting.
  #release() {
    const next = this.#waiting.shift();
    if (next !== undefined) this.#send(next);
    else this.#inFlight--;
  }

  #settle(slot, err) {
    if (slot.done) return;
    slot.done = true;
    slot.cleanup?.();
    slot.reject(err);
  }

  // #lost: serve's stdout ended; every call still waiting fails.
  #lost(err) {
    this.#gone ??= err;
    this.#responses.stop();
    for (const slot of this.#queue.splice(0)) this.#settle(slot, this.#gone);
    for (const slot of this.#waiting.splice(0)) this.#settle(slot, this.#gone);
    this.#inFlight = 0;
  }

  // #fail: the wire broke (a line over its cap, out of step). serve is
  // killed; the calls fail with a ClosedError whose cause says why.
  #fail(cause) {
    this.#lost(new ClosedError(`arca serve was stopped: ${cause.message}`, { cause }));
    this.#kill();
  }

  #kill() {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill('SIGKILL');
  }
}
