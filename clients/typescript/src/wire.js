// The request and response lines. A request line is built by hand, its
// strings by JSON.stringify: serve is strict (exact keys, strings only), so
// only the fields a call names go out. A response is read leniently: fields
// this client does not know are kept and ignored (a newer serve may add
// them), and a value is wrapped in a Secret the moment it is read.

import { FIELDS } from './ops.js';
import { Secret, valueText } from './secret.js';

/** serve's cap on a request line, not counting its newline. */
export const MAX_REQUEST_LINE = 4 << 20;
/** The longest response line read: a get answer is far shorter. */
export const MAX_RESPONSE_LINE = 8 << 20;

/** The names of the request fields a call may set beside op and id. */
export const FIELD_NAMES = new Set(FIELDS.map((f) => f.name));

function text(name, v) {
  if (typeof v !== 'string') throw new TypeError(`${name} must be a string`);
  return JSON.stringify(v);
}

/**
 * The request line after its id: `,"op":…}` and the newline. The id goes in
 * front when the call takes its place on the wire. Each field of FIELDS
 * (generated from the manifest into ops.js) is taken from given, else, when
 * some op may have it, from o; one no op requires is left out when empty
 * ("" is the same as absent on the wire, and the line is shorter).
 * @param {string} op
 * @param {Record<string, unknown>} given the fields given by position (or to call())
 * @param {Record<string, unknown>} o the call's options
 */
export function encodeRest(op, given, o) {
  let s = ',"op":' + text('op', op);
  for (const f of FIELDS) {
    let v = given[f.name];
    if (v === undefined && f.option) v = o[f.name];
    if (v === undefined || (v === '' && !f.required)) continue;
    // A value's text is never quoted in an error.
    s += f.key + text(f.name, f.secret ? valueText(v) : v);
  }
  s += '}\n';
  // 24 bytes cover `{"id":` and the longest id this client sends.
  if (s.length * 3 + 24 > MAX_REQUEST_LINE && Buffer.byteLength(s) + 24 > MAX_REQUEST_LINE + 1) {
    throw new RangeError(`the ${op} request line would be longer than serve's ${MAX_REQUEST_LINE} bytes`);
  }
  return s;
}

/**
 * A success's result as the caller gets it: the object as read, a string
 * value wrapped in a Secret, and the PDP's verdict as policy when it gave one.
 */
export function shapeResult(result, policy) {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    throw new Error('a success whose result is not an object');
  }
  if (typeof result.value === 'string') result.value = new Secret(result.value);
  if (policy !== undefined) result.policy = policy;
  return result;
}

/** What a response's id is, for an error: a number as it is, else its type. */
export function describeId(id) {
  return typeof id === 'number' ? String(id) : id === null ? 'null' : `a ${typeof id}`;
}
