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
