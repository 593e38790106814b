"use strict";
// arca secret requests: the page on which a human types a secret an agent
// asked for. The server answered this page with 401 and no data; the
// approver's token, typed here, is kept in this tab's session storage (of
// this origin only, never in a URL or a cookie) and sent as
// Authorization: Bearer to read the same URL as JSON and to POST the
// value, with the CSRF token the data came with. The value is sent in the
// body alone and the field is emptied at once; the answer holds the
// version stored, never the value. Everything from the server goes into
// the page as text (textContent), never as markup. body's data-phase says
// where the page is: login, loaded, stored or failed.
(function () {
  const $ = (id) => document.getElementById(id);
  const tokenKey = "arca-approver-token";
  const onePath = /^\/requests\/rq_[0-9a-f]{32}$/;
  const validID = /^rq_[0-9a-f]{32}$/;
  let csrf = "";

  function phase(p) { document.body.dataset.phase = p; }

  function say(msg, failed) {
    $("status").textContent = msg;
    $("status").className = failed ? "failed" : "";
  }

  async function call(method, body) {
    const headers = { Authorization: "Bearer " + sessionStorage.getItem(tokenKey), Accept: "application/json" };
    if (body) {
      headers["Content-Type"] = "application/json";
      headers["X-Arca-CSRF"] = csrf;
    }
    const r = await fetch(location.pathname, { method, headers, credentials: "omit", cache: "no-store", body });
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

  function asker(v) {
    const who = [];
    if (v.actor) who.push("actor " + v.actor);
    if (v.client) who.push("client " + v.client);
    return who.length ? who.join(", ") : "(an unnamed agent)";
  }

  function show(v) {
    $("ref").textContent = v.ref;
    $("env").textContent = v.env;
    $("asker").textContent = asker(v);
    $("description").textContent = v.description;
    $("expires").textContent = expires(v.expires_at);
    $("state").textContent = v.state;
    $("state").dataset.state = v.state;
    $("version").textContent = v.version ? String(v.version) : "(none yet)";
    const open = v.state === "pending";
    for (const el of $("value-form").querySelectorAll("input, button")) el.disabled = !open;
    $("request").hidden = false;
  }

  function showList(vs) {
    const ul = $("items");
    ul.replaceChildren();
    for (const v of vs) {
      if (!validID.test(v.id)) continue;
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = "/requests/" + v.id;
      a.textContent = v.ref + " (" + v.env + ")";
      li.appendChild(a);
      li.appendChild(document.createTextNode(" — " + asker(v) + "; expires " + expires(v.expires_at)));
      ul.appendChild(li);
    }
    $("none").hidden = ul.children.length > 0;
    $("list").hidden = false;
  }

  async function store() {
    const body = JSON.stringify({ value: $("value").value });
    $("value").value = "";
    try {
      say("storing…");
      const data = await call("POST", body);
      show(data.request);
      say("Stored as version " + data.request.version + ".");
      phase("stored");
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
    $("request").hidden = true;
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
      if (onePath.test(location.pathname)) show(data.request);
      else showList(data.requests);
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
  $("value-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    store();
  });
  load();
})();
