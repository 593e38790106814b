// A secret value: it prints as <redacted> wherever it goes (toString,
// template strings, JSON, util.inspect and so console.log), and gives its
// text only through reveal(), one call easy to search for.

const REDACTED = '<redacted>';
const inspect = Symbol.for('nodejs.util.inspect.custom');

export class Secret {
  // A private field: no enumeration, no inspect, no structured clone shows it.
  #value;

  /** @param {string} value */
  constructor(value) {
    if (typeof value !== 'string') throw new TypeError('a Secret holds a string');
    this.#value = value;
  }

  /** The value itself. */
  reveal() {
    return this.#value;
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
