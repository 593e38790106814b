// Splitting a stream into lines, bounded: a line longer than max bytes (not
// counting its newline) stops the splitter for good, holding no more than
// max bytes of it. Lines are handed on as Buffers of their exact bytes (the
// audit chain hashes them as written, never re-encoded).

export class Lines {
  #max;
  #onLine;
  #onTooLong;
  #parts = []; // the start of a line, from earlier chunks
  #held = 0; // bytes in #parts
  #stopped = false;

  /**
   * @param {number} max the longest line, in bytes
   * @param {(line: Buffer) => void} onLine
   * @param {() => void} onTooLong called once, when a line passes max
   */
  constructor(max, onLine, onTooLong) {
    this.#max = max;
    this.#onLine = onLine;
    this.#onTooLong = onTooLong;
  }

  /** @param {Buffer} chunk */
  push(chunk) {
    let start = 0;
    while (!this.#stopped) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      let line = chunk.subarray(start, nl);
      if (this.#held > 0) {
        const length = this.#held + line.length;
        if (length > this.#max) return this.#tooLong();
        this.#parts.push(line);
        line = Buffer.concat(this.#parts, length);
        this.#parts = [];
        this.#held = 0;
      } else if (line.length > this.#max) {
        return this.#tooLong();
      }
      start = nl + 1;
      this.#onLine(line);
    }
    if (this.#stopped || start === chunk.length) return;
    const rest = chunk.subarray(start);
    this.#held += rest.length;
    if (this.#held > this.#max) return this.#tooLong();
    this.#parts.push(rest);
  }

  /** The bytes of a last line without its newline (a torn line), at the end. */
  get pending() {
    return this.#held;
  }

  /** Stop: later chunks are dropped. */
  stop() {
    this.#stopped = true;
    this.#parts = [];
    this.#held = 0;
  }

  #tooLong() {
    this.stop();
    this.#onTooLong();
  }
}

/**
 * Lines as strings, for responses: each chunk's whole lines are decoded
 * from UTF-8 in one step and split in the string, rather than cut into a
 * Buffer each and decoded one by one. A newline byte is never inside a
 * UTF-8 sequence, so decoding up to it decodes every line as on its own
 * (a byte that is not UTF-8 becomes U+FFFD either way). Bounded as Lines
 * is, in bytes.
 */
export class TextLines {
  #max;
  #onLine;
  #onTooLong;
  #parts = []; // the start of a line, from earlier chunks
  #held = 0; // bytes in #parts
  #stopped = false;

  /**
   * @param {number} max the longest line, in bytes
   * @param {(line: string) => void} onLine
   * @param {() => void} onTooLong called once, when a line passes max
   */
  constructor(max, onLine, onTooLong) {
    this.#max = max;
    this.#onLine = onLine;
    this.#onTooLong = onTooLong;
  }

  /** @param {Buffer} chunk */
  push(chunk) {
    if (this.#stopped) return;
    const last = chunk.lastIndexOf(10);
    if (last < 0) return this.#hold(chunk);
    let whole = chunk.subarray(0, last + 1);
    if (this.#held > 0) {
      // Only the first line can be this long: the check below holds it.
      this.#parts.push(whole);
      whole = Buffer.concat(this.#parts, this.#held + whole.length);
      this.#parts = [];
      this.#held = 0;
    }
    // The cap is on the line's bytes as they came: only lines that fit are
    // handed on, up to the first that does not (none can when all of the
    // bytes fit).
    let fit = Infinity;
    if (whole.length - 1 > this.#max) {
      fit = 0;
      for (let at = 0, nl = whole.indexOf(10); nl - at <= this.#max; at = nl + 1, nl = whole.indexOf(10, at)) {
        fit++;
        if (nl === whole.length - 1) {
          fit = Infinity;
          break;
        }
      }
    }
    const text = whole.toString('utf8');
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0 && !this.#stopped; nl = text.indexOf('\n', start)) {
      if (fit-- === 0) return this.#tooLong();
      const line = text.slice(start, nl);
      start = nl + 1;
      this.#onLine(line);
    }
    if (!this.#stopped && last + 1 < chunk.length) this.#hold(chunk.subarray(last + 1));
  }

  #hold(rest) {
    this.#held += rest.length;
    if (this.#held > this.#max) return this.#tooLong();
    this.#parts.push(rest);
  }

  /** Stop: later chunks are dropped. */
  stop() {
    this.#stopped = true;
    this.#parts = [];
    this.#held = 0;
  }

  #tooLong() {
    this.stop();
    this.#onTooLong();
  }
}
