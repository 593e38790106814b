// The uses against a real serve: a service on a local HTTP server that
// echoes what it receives, a service on a port nothing listens on, and an
// action that prints the credential.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { ArcaError } from '../src/index.js';
import { arca, home, start } from './helpers.mjs';

// An HTTP server that answers every request with what it received, as
// JSON: the credential serve injects comes back in the body, for scrub.
async function echoServer(t) {
  const srv = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ method: req.method, url: req.url, authorization: req.headers.authorization, test: req.headers['x-test'], body }));
    });
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(() => srv.close());
  return srv.address().port;
}

const TOKEN = 'tok-3f9a7c1e-canary';

// A home with the credential stored, a service echo on the echo server,
// a service down on a port nothing listens on, and an action hello that
// prints the credential and its argument.
async function useHome(t) {
  const port = await echoServer(t);
  const h = home(t, `[services.echo]
base_url = "http://127.0.0.1:${port}"
credential = "arca://app/token"
auth = "bearer"
methods = ["GET", "POST"]
paths = ["/*"]
allow_private = true

[services.down]
base_url = "http://127.0.0.1:1"
credential = "arca://app/token"
auth = "bearer"
paths = ["/*"]
allow_private = true

[actions.hello]
argv = ["sh", "-c", "printf '%s:%s' \\"$TOKEN\\" \\"$1\\"", "hello"]
args = "^[a-z]+$"
env = { TOKEN = "arca://app/token" }
`);
  arca(h, ['--config', h.config, 'put', 'arca://app/token'], TOKEN);
  return h;
}

test('http against a real serve: the credential reaches the upstream, and comes back scrubbed', async (t) => {
  const c = await start(t, await useHome(t));
  const h = await c.http('echo', 'POST', '/repos/x', { query: { q: ['1', '2'], r: 'x' }, headers: { 'X-Test': 'y' }, body: 'hello' });
  assert.equal(h.service, 'echo');
  assert.equal(h.status, 200);
  assert.equal(h.truncated, false);
  assert.deepEqual(h.redactions, [{ ref: 'arca://app/token', count: 1 }]);
  assert.ok(!JSON.stringify(h).includes(TOKEN), 'the result holds the credential');
  const echoed = JSON.parse(h.body);
  assert.deepEqual(echoed, { method: 'POST', url: '/repos/x?q=1&q=2&r=x', authorization: 'Bearer <redacted:app/token>', test: 'y', body: 'hello' });
  assert.deepEqual(h.headers['Content-Type'], ['application/json']);
  const err = await c.http('down', 'GET', '/').then(() => null, (e) => e);
  assert.ok(err instanceof ArcaError, `got ${err}`);
  assert.equal(err.code, 'upstream_failed');
  assert.equal(err.details?.cause, 'connect');
  const unknown = await c.http('nope', 'GET', '/').then(() => null, (e) => e);
  assert.equal(unknown?.code, 'bad_request');
});

test('exec against a real serve: the credential in the child, its output scrubbed, a bad argument refused', async (t) => {
  const c = await start(t, await useHome(t));
  const x = await c.exec('hello', { args: ['abc'] });
  assert.equal(x.action, 'hello');
  assert.equal(x.exit_code, 0);
  assert.equal(x.stdout, '<redacted:app/token>:abc');
  assert.deepEqual(x.truncated, { stdout: false, stderr: false });
  assert.deepEqual(x.redactions, [{ ref: 'arca://app/token', count: 1 }]);
  const err = await c.exec('hello', { args: ['ABC'] }).then(() => null, (e) => e);
  assert.equal(err?.code, 'bad_request');
});

test('proxy against a real serve: a base URL per service, the token swapped for the credential, closed by stop', async (t) => {
  const c = await start(t, await useHome(t));
  const p = await c.proxy({ services: ['echo'] });
  assert.match(p.base_urls.echo, /^http:\/\/127\.0\.0\.1:\d+\//);
  assert.equal(typeof p.token, 'string');
  const url = p.base_urls.echo.replace(/\/$/, '') + '/repos/x';
  const refused = await fetch(url);
  assert.equal(refused.status, 401);
  const r = await fetch(url, { headers: { Authorization: `Bearer ${p.token}` } });
  assert.equal(r.status, 200);
  const echoed = await r.json();
  assert.equal(echoed.url, '/repos/x');
  assert.equal(echoed.authorization, 'Bearer <redacted:app/token>');
  assert.deepEqual(await c.proxy({ stop: true }), { stopped: true });
  await assert.rejects(fetch(url, { headers: { Authorization: `Bearer ${p.token}` } }));
});
