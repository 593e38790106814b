// arca mcp driven by the TypeScript MCP SDK, a client written apart from
// the Go SDK the mcp package is tested with: it lists the tools, calls
// each one (the SDK checks every structured result against the tool's
// output schema), and records every message both ways to show that the
// credential a service and an action use reaches the upstream and the
// child, and never the client.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { arcaBin } from '../../../clients/typescript/scripts/arca-bin.mjs';

const bin = arcaBin();
const TOKEN = 'tok-8c1d5e2b-mcp-canary';
const CLIENT = 'arca-ts-probe';
const TOOLS = ['arca_action', 'arca_changes', 'arca_history', 'arca_http', 'arca_list'];

// An HTTP server on loopback that answers each request with what it
// received, and keeps the Authorization headers it was sent.
async function echoServer(t) {
  const seen = [];
  const srv = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ method: req.method, url: req.url, authorization: req.headers.authorization }));
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(() => srv.close());
  return { port: srv.address().port, seen };
}

// A fresh HOME with `arca init` run, the credential stored, and a config
// with service echo on the echo server and action count, which prints the
// credential's length and the credential.
function home(t, port) {
  const dir = mkdtempSync(join(tmpdir(), 'arca-mcp-ts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { HOME: dir, PATH: process.env.PATH };
  execFileSync(bin, ['init'], { env, stdio: 'ignore' });
  const config = join(dir, 'arca.toml');
  writeFileSync(config, `[services.echo]
base_url = "http://127.0.0.1:${port}"
credential = "arca://app/token"
auth = "bearer"
paths = ["/*"]
allow_private = true

[actions.count]
argv = ["sh", "-c", "printf '%s:%s' \\"\${#TOKEN}\\" \\"$TOKEN\\""]
env = { TOKEN = "arca://app/token" }
`, { mode: 0o600 });
  execFileSync(bin, ['--config', config, 'put', 'arca://app/token'], { env, input: TOKEN, stdio: ['pipe', 'ignore', 'inherit'] });
  return { env, config };
}

// A client on arca mcp over stdio, every message it sends and receives
// kept in messages, arca's stderr (the audit wire) in stderr().
async function connect(t, h) {
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp', '--config', h.config, '--actor', 'ts-agent', '--audit-stderr'],
    env: h.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (d) => { stderr += d; });
  const messages = [];
  const send = transport.send.bind(transport);
  transport.send = (m, opts) => { messages.push(JSON.stringify(m)); return send(m, opts); };
  const client = new Client({ name: CLIENT, version: '1.0.0' });
  await client.connect(transport);
  // connect set onmessage: wrap it so every message arca sends is kept too
  const deliver = transport.onmessage;
  transport.onmessage = (m, extra) => { messages.push(JSON.stringify(m)); deliver(m, extra); };
  t.after(() => client.close().catch(() => {}));
  return { client, messages, stderr: () => stderr };
}

function structured(res) {
  assert.equal(res.isError, undefined, `the call failed: ${JSON.stringify(res.content)}`);
  return res.structuredContent;
}

test('the tools over the TypeScript SDK: listed, called, their results of their output schemas, the credential never in a message', async (t) => {
  const echo = await echoServer(t);
  const h = home(t, echo.port);
  const { client, messages, stderr } = await connect(t, h);

  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name).sort();
  // arca_request_secret is being added beside these: allowed, not required
  assert.deepEqual(names.filter((n) => n !== 'arca_request_secret'), TOOLS);
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', `${tool.name} input schema`);
    if (TOOLS.includes(tool.name)) assert.equal(tool.outputSchema?.type, 'object', `${tool.name} output schema`);
  }
  const readOnly = Object.fromEntries(tools.map((x) => [x.name, x.annotations?.readOnlyHint ?? false]));
  assert.deepEqual([readOnly.arca_list, readOnly.arca_history, readOnly.arca_changes, readOnly.arca_http, readOnly.arca_action], [true, true, true, false, false]);

  const list = structured(await client.callTool({ name: 'arca_list', arguments: {} }));
  assert.equal(list.env, 'default');
  assert.deepEqual(list.records.map((r) => [r.ref, r.version]), [['arca://app/token', 1]]);

  const hist = structured(await client.callTool({ name: 'arca_history', arguments: { ref: 'arca://app/token' } }));
  assert.equal(hist.ref, 'arca://app/token');
  assert.equal(hist.current, 1);
  assert.deepEqual(hist.versions.map((v) => [v.version, v.state]), [[1, 'current']]);

  const first = structured(await client.callTool({ name: 'arca_changes', arguments: {} }));
  assert.equal(typeof first.cursor, 'string');
  const again = structured(await client.callTool({ name: 'arca_changes', arguments: { since: first.cursor } }));
  assert.deepEqual(again.changes, []);

  const http = structured(await client.callTool({ name: 'arca_http', arguments: { service: 'echo', method: 'GET', path: '/repos/x' } }));
  assert.equal(http.status, 200);
  assert.deepEqual(JSON.parse(http.body), { method: 'GET', url: '/repos/x', authorization: 'Bearer <redacted:app/token>' });
  assert.deepEqual(http.redactions, [{ ref: 'arca://app/token', count: 1 }]);
  assert.deepEqual(echo.seen, [`Bearer ${TOKEN}`], 'the upstream did not receive the credential');

  const run = structured(await client.callTool({ name: 'arca_action', arguments: { action: 'count' } }));
  assert.equal(run.exit_code, 0);
  assert.equal(run.stdout, `${TOKEN.length}:<redacted:app/token>`);
  assert.deepEqual(run.redactions, [{ ref: 'arca://app/token', count: 1 }]);

  // A failed call: isError, no structured content (callTool would check it
  // against the tool's output schema, even on an error), its second text the
  // error object as serve has it.
  const missing = await client.callTool({ name: 'arca_history', arguments: { ref: 'arca://app/nope' } });
  assert.equal(missing.isError, true);
  assert.equal(missing.structuredContent, undefined);
  assert.equal(JSON.parse(missing.content[1].text).error.code, 'not_found');
  assert.match(missing.content[0].text, /^arca_history failed: not_found: /);

  const unknown = await client.request({ method: 'tools/call', params: { name: 'arca_nope', arguments: {} } }, CallToolResultSchema).then(() => null, (e) => e);
  assert.ok(unknown, 'an unknown tool was answered');
  assert.equal(unknown.code, -32602);

  await client.close();
  const wire = messages.join('\n');
  assert.ok(messages.length >= 16, `only ${messages.length} messages recorded`);
  assert.ok(wire.includes('<redacted:app/token>'), 'the recorded messages hold no scrubbed output');
  for (const form of [TOKEN, Buffer.from(TOKEN).toString('base64')]) {
    assert.ok(!wire.includes(form), 'the credential reached an MCP message');
  }

  const events = stderr().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.ok(!stderr().includes(TOKEN), 'the credential reached the audit wire');
  assert.equal(events[0].event, 'start');
  assert.equal(events.at(-1).event, 'stop');
  assert.deepEqual(events.filter((e) => e.outcome).map((e) => [e.event, e.outcome, e.actor, e.client]), [
    ['list', 'ok', 'ts-agent', CLIENT],
    ['history', 'ok', 'ts-agent', CLIENT],
    ['changes', 'ok', 'ts-agent', CLIENT],
    ['changes', 'ok', 'ts-agent', CLIENT],
    ['http', 'ok', 'ts-agent', CLIENT],
    ['exec', 'ok', 'ts-agent', CLIENT],
    ['error', 'not_found', 'ts-agent', CLIENT],
  ]);
});
