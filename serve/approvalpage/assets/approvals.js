"use strict";
// arca approvals: the page of a serve session's pending approvals. The
// server answered this page with 401 and no data; the approver's token,
// typed here, is kept in this tab's session storage (of this origin only,
// never in a URL or a cookie) and sent as Authorization: Bearer to read the
// same URL as JSON and to POST a decision, with the CSRF token the data
// came with. Everything from the server goes into the page as text
// (textContent), never as markup. body's data-phase says where the page
// is: login, loaded, decided or failed.
(function () {
  const $ = (id) => document.getElementById(id);
  const tokenKey = "arca-approver-token";
  const onePath = /^\/approvals\/ap_[0-9a-f]{32}$/;
  const validID = /^ap_[0-9a-f]{32}$/;
  let csrf = "";

  function phase(p) { document.body.dataset.phase = p; }

  function say(msg, failed) {
    $("status").textContent = msg;
    $("status").className = failed ? "failed" : "";
  }

  // call sends method to this page's URL with the token, and the CSRF
  // token with a body; a 401 forgets the token.
  async function call(method, body) {
    const headers = { Authorization: "Bearer " + sessionStorage.getItem(tokenKey), Accept: "application/json" };
    if (body) {
      headers["Content-Type"] = "application/json";
      headers["X-Arca-CSRF"] = csrf;
    }
    const r = await fetch(location.pathname, { method, headers, credentials: "omit", cache: "no-store", body: body ? JSON.stringify(body) : undefined });
    const data = await r.json().catch(() => ({}));
    if (r.status === 401) {
      sessionStorage.removeItem(tokenKey);
      const e = new Error("the token was refused: " + (data.error || "401"));
      e.login = true;
      throw e;
    }
    if (!r.ok) throw new Error(data.error || r.status + " " + r.statusText);
    return data;
  }

  function expires(ts) {
    const d = new Date(ts);
    const min = Math.round((d.getTime() - Date.now()) / 60000);
    return d.toLocaleString() + (min >= 0 ? " (in " + min + " min)" : " (" + -min + " min ago)");
  }

  function show(v) {
    $("summary").textContent = v.summary;
    $("reason").textContent = v.reason || "(none given)";
    $("fingerprint").textContent = v.fingerprint;
    $("expires").textContent = expires(v.expires_at);
    $("state").textContent = v.state;
    $("state").dataset.state = v.state;
    const open = v.state === "pending";
    for (const el of $("chooser").querySelectorAll("input, button")) el.disabled = !open;
    $("approval").hidden = false;
  }

  function showList(vs) {
    const ul = $("items");
    ul.replaceChildren();
    for (const v of vs) {
      if (!validID.test(v.id)) continue;
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = "/approvals/" + v.id;
      a.textContent = v.summary;
      li.appendChild(a);
      li.appendChild(document.createTextNode(" — " + (v.reason || "no reason given") + "; expires " + expires(v.expires_at)));
      ul.appendChild(li);
    }
    $("none").hidden = ul.children.length > 0;
    $("list").hidden = false;
  }

  // scope is the chooser's scope, or an Error.
  function scope() {
    const kind = document.querySelector('input[name="scope"]:checked').value;
    const n = (id, max) => {
      const v = Number($(id).value);
      if (!Number.isInteger(v) || v < 1 || v > max) throw new Error("give a whole number from 1 to " + max);
      return v;
    };
    switch (kind) {
      case "once": return { uses: 1, ttl_s: 0 };
      case "uses": return { uses: n("uses-n", 10000), ttl_s: 0 };
      case "minutes": return { uses: 0, ttl_s: n("minutes-n", 1440) * 60 };
      default: return { uses: 0, ttl_s: 0 };
    }
  }

  async function decide(grant) {
    try {
      const body = grant ? { decision: "grant", scope: scope() } : { decision: "deny" };
      say(grant ? "approving…" : "denying…");
      const data = await call("POST", body);
      show(data.approval);
      say("This approval is " + data.approval.state + ".");
      phase("decided");
    } catch (e) {
      failed(e);
    }
  }

  function failed(e) {
    if (e.login) return askToken(e.message);
    say(e.message, true);
    phase("failed");
  }

  function askToken(msg) {
    $("list").hidden = true;
    $("approval").hidden = true;
    $("login").hidden = false;
    say(msg || "", !!msg);
    $("token").focus();
    phase("login");
  }

  async function load() {
    if (!sessionStorage.getItem(tokenKey)) return askToken();
    say("loading…");
    try {
      const data = await call("GET");
      csrf = data.csrf;
      if (onePath.test(location.pathname)) show(data.approval);
      else showList(data.approvals);
      say("");
      phase("loaded");
    } catch (e) {
      failed(e);
    }
  }

  $("login-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(tokenKey, $("token").value);
    $("token").value = "";
    $("login").hidden = true;
    load();
  });
  $("approve").addEventListener("click", () => decide(true));
  $("deny").addEventListener("click", () => decide(false));
  $("uses-n").addEventListener("input", () => { $("scope-uses").checked = true; });
  $("minutes-n").addEventListener("input", () => { $("scope-minutes").checked = true; });
  load();
})();
