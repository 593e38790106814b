// The scrub op, and scrubStream: a tool's output piped through it reaches
// its reader with the released values redacted, however it was cut.

import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { scrubStream } from '../src/index.js';
import { home, start } from './helpers.mjs';

test('scrub and scrubStream redact what the session released', async (t) => {
  const c = await start(t, home(t));
  const secret = 'tok-9f8e7d6c5b';
  await c.put('arca://app/token', secret);
  await c.put('arca://app/pin', '123');
  const output = `connecting… token=${secret}\nretry with ${secret} ✓ pin 123\n`;
  assert.equal((await c.scrub(output)).text, output, 'nothing released yet');
  await c.get('arca://app/token');
  await c.get('arca://app/pin');
  const whole = await c.scrub(output);
  assert.ok(!whole.text.includes(secret));
  assert.equal(whole.text.split('<redacted:app/token>').length - 1, 2);
  assert.deepEqual(whole.redactions, [{ ref: 'arca://app/token', count: 2 }]);
  assert.deepEqual(whole.unscrubbable, ['arca://app/pin']);
  const bytes = Buffer.from(output);
  for (const size of [1, 3, 7, bytes.length]) {
    const pieces = [];
    for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
    const s = scrubStream(c, `tool-${size}`);
    let got = '';
    await pipeline(Readable.from(pieces), s, async (src) => {
      for await (const chunk of src) got += chunk;
    });
    assert.equal(got, whole.text, `pieces of ${size} bytes`);
    assert.equal(s.redactions.get('arca://app/token'), 2);
    assert.deepEqual(s.unscrubbable, ['arca://app/pin']);
  }
});
