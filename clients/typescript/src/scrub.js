// A scrubbing stream: what an agent host pipes a tool's output through
// before a model reads it.

import { StringDecoder } from 'node:string_decoder';
import { Transform } from 'node:stream';

/** The most text one scrub request carries: far under serve's line cap once escaped. */
const CHUNK = 256 << 10;

/**
 * A Transform that sends what is written to it to serve as the chunks of
 * one scrub stream, named stream, and pushes on the text with every value
 * the session released redacted. serve holds back what could be the start
 * of a value; the end of the input ends the stream and pushes the rest, so
 * any split of the input gives the same text. Bytes are read as UTF-8 (a
 * character split across writes is kept whole; bytes that are not UTF-8
 * become U+FFFD). redactions counts the placeholders pushed, by ref;
 * unscrubbable is what serve's last answer listed.
 * @param {{scrub(text: string, options?: object): Promise<{text: string, redactions: Array<{ref: string, count: number}>, unscrubbable: string[]}>}} client
 * @param {string} stream
 * @param {{env?: string}} [options]
 */
export function scrubStream(client, stream, options = {}) {
  const decoder = new StringDecoder('utf8');
  let open = false;
  const t = new Transform({
    async transform(chunk, encoding, done) {
      try {
        const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
        await send(text, false);
        done();
      } catch (err) {
        done(err);
      }
    },
    async flush(done) {
      try {
        await send(decoder.end(), true);
        done();
      } catch (err) {
        done(err);
      }
    },
  });
  t.redactions = new Map();
  t.unscrubbable = [];
  async function send(text, final) {
    for (let i = 0; ; ) {
      let end = Math.min(text.length, i + CHUNK);
      // Do not cut a surrogate pair.
      if (end < text.length && end > i && text.charCodeAt(end - 1) >= 0xd800 && text.charCodeAt(end - 1) <= 0xdbff) end--;
      const part = text.slice(i, end);
      i = end;
      const last = final && i >= text.length;
      if (part === '' && !last) return;
      if (part === '' && last && !open) return; // nothing was ever sent: no stream to end
      const res = await client.scrub(part, { stream, final: last, env: options.env });
      open = !last;
      for (const r of res.redactions) t.redactions.set(r.ref, (t.redactions.get(r.ref) ?? 0) + r.count);
      t.unscrubbable = res.unscrubbable;
      if (res.text !== '') t.push(res.text);
      if (i >= text.length) return;
    }
  }
  return t;
}
