// The request and response lines. A request line is built by hand, its
// strings by JSON.stringify: serve is strict (exact keys, strings only), so
// only the fields a call names go out. A response is read leniently: fields
// this client does not know are kept and ignored (a newer serve may add
// them), and a value is wrapped in a Secret the moment it is read.

import { Secret, valueText } from './secret.js';

/** serve's cap on a request line, not counting its newline. */
export const MAX_REQUEST_LINE = 4 << 20;
/** The longest response line read: a get answer is far shorter. */
export const MAX_RESPONSE_LINE = 8 << 20;

function text(name, v) {
  if (typeof v !== 'string') throw new TypeError(`${name} must be a string`);
  return JSON.stringify(v);
}

// What each op's method (generated into ops.js) writes its line with. A
// field given as undefined is not sent; one no op requires (keepEmpty
// false) is not sent when empty either: "" is the same as absent on the
// wire, and the line is shorter. One an op requires is sent even empty, so
// that serve can say it is.

/** The field name as the line has it (key is `,"name":`), or "". */
export function field(key, name, v, keepEmpty) {
  if (v === undefined || (v === '' && !keepEmpty)) return '';
  return key + text(name, v);
}

/** field for a boolean (scrub's final): sent when given, as true or false. */
export function boolField(key, name, v) {
  if (v === undefined) return '';
  if (typeof v !== 'boolean') throw new TypeError(`${name} must be a boolean`);
  return key + (v ? 'true' : 'false');
}

const isStrings = (v) => Array.isArray(v) && v.every((s) => typeof s === 'string');
const isCount = (v) => Number.isSafeInteger(v) && v >= 0;

/**
 * field for one sent as JSON, of shape raw: 'int', an integer of 0 or more
 * (version, if_version); 'numbers', an array of them (destroy's
 * versions); 'strings', an array of strings
 * (exec's args, proxy's services); 'map', an object of strings (http's
 * headers); 'multimap', an object of strings or arrays of strings (http's
 * query); 'ints', an object of integers (approve's scope), its keys in
 * order. Sent when given, as given; an error names the field, never an
 * entry of it.
 */
export function rawField(key, name, v, raw) {
  if (v === undefined) return '';
  if (raw === 'int') {
    if (!isCount(v)) throw new TypeError(`${name} must be an integer of 0 or more`);
    return key + String(v);
  }
  if (raw === 'numbers') {
    if (!Array.isArray(v) || !v.every(isCount)) throw new TypeError(`${name} must be an array of integers of 0 or more`);
    return key + JSON.stringify(v);
  }
  if (raw === 'strings') {
    if (!isStrings(v)) throw new TypeError(`${name} must be an array of strings`);
    return key + JSON.stringify(v);
  }
  const each = raw === 'map' ? 'a string' : raw === 'ints' ? 'an integer' : 'a string or an array of strings';
  if (raw === 'ints') {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new TypeError(`${name} must be an object of which each entry is ${each}`);
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    if (!entries.every(([, x]) => Number.isSafeInteger(x))) throw new TypeError(`each entry of ${name} must be ${each}`);
    return key + JSON.stringify(Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1))));
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new TypeError(`${name} must be an object of which each entry is ${each}`);
  const entries = Object.entries(v);
  for (const [, x] of entries) {
    if (typeof x !== 'string' && (raw === 'map' || !isStrings(x))) throw new TypeError(`each entry of ${name} must be ${each}`);
  }
  return key + JSON.stringify(Object.fromEntries(entries));
}

/** field for a secret, given as a string or a Secret; never quoted in an error. */
export function secretField(key, name, v, keepEmpty) {
  return v === undefined ? '' : field(key, name, valueText(v), keepEmpty);
}

/**
 * The request line after its id, from the fields written after `,"op":…`:
 * the id goes in front when the call takes its place on the wire.
 */
export function line(op, fields) {
  const s = fields + '}\n';
  // 24 bytes cover `{"id":` and the longest id this client sends.
  if (s.length * 3 + 24 > MAX_REQUEST_LINE && Buffer.byteLength(s) + 24 > MAX_REQUEST_LINE + 1) {
    throw new RangeError(`the ${op} request line would be longer than serve's ${MAX_REQUEST_LINE} bytes`);
  }
  return s;
}

/**
 * The request line of call(): op, and each field of table (ops.js's
 * FIELDS) that fields has.
 * @param {string} op
 * @param {ReadonlyArray<{name: string, key: string, required: boolean, secret: boolean, bool: boolean, raw: string | null}>} table
 * @param {Record<string, unknown>} fields
 */
export function encodeRest(op, table, fields) {
  let s = ',"op":' + text('op', op);
  for (const f of table) {
    if (f.raw !== null) {
      s += rawField(f.key, f.name, fields[f.name], f.raw);
      continue;
    }
    s += (f.secret ? secretField : f.bool ? boolField : field)(f.key, f.name, fields[f.name], f.required);
  }
  return line(op, s);
}

/**
 * A success's result as the caller gets it: the object as read, a string
 * value wrapped in a Secret (dropped at expires_at, read on now, when the
 * result has one), and the PDP's verdict as policy when it gave one.
 */
export function shapeResult(result, policy, now = Date.now) {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    throw new Error('a success whose result is not an object');
  }
  if (typeof result.value === 'string') {
    // A get under a grant: the value is dropped at the grant's end.
    const end = typeof result.expires_at === 'string' ? Date.parse(result.expires_at) : NaN;
    result.value = Number.isNaN(end) ? new Secret(result.value) : new Secret(result.value, { expiresAt: end, now });
  }
  if (policy !== undefined) result.policy = policy;
  return result;
}

/** What a response's id is, for an error: a number as it is, else its type. */
export function describeId(id) {
  return typeof id === 'number' ? String(id) : id === null ? 'null' : `a ${typeof id}`;
}
