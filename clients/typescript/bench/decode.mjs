// node bench/decode.mjs [ROUNDS]: the client's reading of get responses in
// isolation, the two ways in turns: TextLines (a chunk decoded at once and
// split in the string, what the client reads responses with) and Lines
// (a Buffer cut for each line and decoded on its own, what it reads audit
// events with, and read responses with before), each line then parsed by
// JSON.parse. 64 response lines a chunk, as 64 callers get them; prints ns
// a line.

import { Lines, TextLines } from '../src/lines.js';

const rounds = Number(process.argv[2] ?? 5);
const line = '{"id":12345,"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"s3cret-value-of-some-length-0123456789","version":1,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:14:14.381353202Z"}}\n';
const chunk = Buffer.from(line.repeat(64));
const chunks = 20_000;
let ids = 0;
const ways = {
  TextLines: new TextLines(8 << 20, (s) => { ids += JSON.parse(s).id; }, () => {}),
  Lines: new Lines(8 << 20, (b) => { ids += JSON.parse(b.toString('utf8')).id; }, () => {}),
};
const got = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
for (let r = 0; r < rounds; r++) {
  for (const [name, l] of Object.entries(ways)) {
    const began = process.hrtime.bigint();
    for (let i = 0; i < chunks; i++) l.push(chunk);
    got[name].push(Number(process.hrtime.bigint() - began) / (chunks * 64));
  }
}
if (ids !== rounds * 2 * chunks * 64 * 12345) throw new Error('a line was lost');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, xs] of Object.entries(got)) {
  console.log(`${name}: ${median(xs).toFixed(0)} ns a line (median of ${rounds}; ${Math.min(...xs).toFixed(0)} to ${Math.max(...xs).toFixed(0)})`);
}
