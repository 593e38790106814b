"use strict";
// arca's loopback page, the part its views share (approvals.js, request.js).
// The server answered the view with 401 and no data; the approver's token,
// typed here, is kept in this tab's session storage (of this origin only,
// never in a URL or a cookie) and sent as Authorization: Bearer to read the
// same URL as JSON and to POST to it, with the CSRF token the data came
// with. Everything from the server goes into the page as text
// (textContent), never as markup. body's data-phase says where the page
// is: login, loaded, failed, or what the view's POST made of it.
//
// arcaPage(views, loaded) starts a view: views are the ids of its sections
// hidden while the token is asked for; loaded(data) shows what the server
// answered. It returns what the view's script uses.
window.arcaPage = function (views, loaded) {
  const $ = (id) => document.getElementById(id);
  const tokenKey = "arca-approver-token";
  let csrf = "";

  function phase(p) { document.body.dataset.phase = p; }

  function say(msg, failed) {
    $("status").textContent = msg;
    $("status").className = failed ? "failed" : "";
  }

  // call sends method to this page's URL with the token, and the CSRF
  // token with a body (sent as JSON); a 401 forgets the token.
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

  function failed(e) {
    if (e.login) return askToken(e.message);
    say(e.message, true);
    phase("failed");
  }

  function askToken(msg) {
    for (const id of views) $(id).hidden = true;
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
      loaded(data);
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
  load();
  return { $, phase, say, call, expires, failed };
};
