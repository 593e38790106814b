// A secret value: it prints as <redacted> wherever it goes (toString,
// template strings, JSON, util.inspect and so console.log), and gives its
// text only through reveal(), one call easy to search for. A value got
// under a grant is dropped at the grant's end.

import { ExpiredError } from './errors.js';

const REDACTED = '<redacted>';
const inspect = Symbol.for('nodejs.util.inspect.custom');

export class Secret {
  // A private field: no enumeration, no inspect, no structured clone shows it.
  #value;
  #expiresAt; // ms since the epoch: when the value is dropped, or undefined
  #now;

  /**
   * @param {string} value
   * @param {{expiresAt: number, now?: () => number}} [expiry] when the value
   *   is dropped (the end of the grant it was got under), and the clock
   */
  constructor(value, expiry) {
    if (typeof value !== 'string') throw new TypeError('a Secret holds a string');
    this.#value = value;
    if (expiry !== undefined) {
      this.#expiresAt = expiry.expiresAt;
      this.#now = expiry.now ?? Date.now;
    }
  }

  /**
   * The value itself. Once past expiresAt it is dropped, and this throws
   * ExpiredError: fetch it again.
   */
  reveal() {
    if (this.#value === undefined || (this.#expiresAt !== undefined && this.#now() >= this.#expiresAt)) {
      this.#value = undefined; // dropped, for good
      throw new ExpiredError();
    }
    return this.#value;
  }

  /** When the value is dropped (the end of its grant), or undefined when never. */
  get expiresAt() {
    return this.#expiresAt === undefined ? undefined : new Date(this.#expiresAt);
  }

  toString() {
    return REDACTED;
  }

  toJSON() {
    return REDACTED;
  }

  [Symbol.toPrimitive]() {
    return REDACTED;
  }

  [inspect]() {
    return REDACTED;
  }
}

// valueText is the text of a put or rotate value, given as a string or a Secret.
export function valueText(value) {
  if (value instanceof Secret) return value.reveal();
  if (typeof value === 'string') return value;
  throw new TypeError('a value is a string or a Secret');
}
