"use strict";
// arca ui: reads the JSON endpoints and fills the page. Everything from
// the server goes into the page as text (textContent), never as markup.
// The token comes in the fragment of the URL arca ui printed (#token=...),
// which never reaches a server: it is kept in this tab's session storage,
// of this origin only, taken out of the address bar, and sent as
// Authorization: Bearer with every read. No cookie carries it.
(function () {
  const $ = (id) => document.getElementById(id);
  const tokenKey = "arca-ui-token";

  // takeToken moves a token in the URL's fragment into session storage,
  // and the fragment out of the address bar and the history; it reports
  // whether there was one.
  function takeToken() {
    const t = new URLSearchParams(location.hash.replace(/^#/, "")).get("token");
    if (!t) return false;
    sessionStorage.setItem(tokenKey, t);
    history.replaceState(null, "", location.pathname + location.search);
    return true;
  }

  async function get(path, params) {
    const token = sessionStorage.getItem(tokenKey);
    if (!token) throw new Error("no token: open the URL arca ui printed (it carries the token)");
    const q = new URLSearchParams(params || {});
    const r = await fetch(path + "?" + q.toString(), { credentials: "omit", headers: { Authorization: "Bearer " + token } });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || r.status + " " + r.statusText);
    return body;
  }

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text === undefined || text === "" ? "-" : String(text);
    if (cls) td.className = cls;
    tr.appendChild(td);
  }

  function rows(table, items, fill) {
    const tbody = $(table).querySelector("tbody");
    tbody.replaceChildren();
    for (const it of items || []) {
      const tr = document.createElement("tr");
      fill(tr, it);
      tbody.appendChild(tr);
    }
  }

  function failed(e) {
    $("status").textContent = e.message;
    $("status").className = "failed";
  }

  function ago(s) {
    if (s < 3600) return Math.floor(s / 60) + " min";
    if (s < 172800) return Math.floor(s / 3600) + " h";
    return Math.floor(s / 86400) + " days";
  }

  function short(ts) { return ts ? ts.replace("T", " ").replace(/\.\d+Z$/, "Z") : ""; }

  async function loadHealth(env) {
    const h = await get("/api/health", { env });
    $("health").textContent = (h.healthy ? "healthy" : "NOT HEALTHY") + ", " + h.records + " records, " + h.versions + " earlier versions kept" +
      (h.erased > 0 ? ", " + h.erased + " soft-deleted past keep_deleted erased" : "") + " (" + h.kind + " vault " + h.vault + ")";
    $("health").className = h.healthy ? "ok" : "error";
    const ul = $("problems");
    ul.replaceChildren();
    for (const p of (h.problems || []).concat(h.info || [])) {
      const li = document.createElement("li");
      li.textContent = p;
      ul.appendChild(li);
    }
    const rs = h.recipients || [];
    $("recipients-box").hidden = rs.length === 0;
    const rl = $("recipients");
    rl.replaceChildren();
    for (const r of rs) {
      const li = document.createElement("li");
      li.textContent = r;
      rl.appendChild(li);
    }
  }

  // The records' page: a window of pageRows of those the search picks,
  // paged on the server over every record.
  const pageRows = 50;
  const recs = { offset: 0, total: 0, q: "" };

  async function loadRecords(env) {
    const res = await get("/api/records", { env, q: recs.q, offset: recs.offset, limit: pageRows });
    recs.total = res.total;
    $("records-count").textContent = "(" + res.total + (recs.q ? " matching" : "") + ")";
    rows("records", res.records, (tr, r) => {
      refCell(tr, env, r); cell(tr, r.version); cell(tr, short(r.created_at)); cell(tr, short(r.updated_at));
      cell(tr, short(r.rotated_at)); cell(tr, ago(r.since_rotation_s)); versionsButton(tr, env, r.ref);
    });
    const last = Math.min(recs.offset + res.records.length, res.total);
    $("r-range").textContent = res.total === 0 ? "none" : (recs.offset + 1) + "–" + last + " of " + res.total;
    $("r-prev").disabled = recs.offset === 0;
    $("r-next").disabled = last >= res.total;
  }

  // refCell adds the record's ref to tr, as a button that opens its detail.
  function refCell(tr, env, r) {
    const td = document.createElement("td");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "ref";
    b.textContent = r.ref;
    b.dataset.detail = r.ref;
    b.addEventListener("click", () => ui.showDetail(env, r).catch(failed));
    td.appendChild(b);
    tr.appendChild(td);
  }

  // pageRecords moves the records' window by delta rows, or to the first
  // page of a new search, and loads it.
  function pageRecords(delta, q) {
    if (q !== undefined) { recs.q = q; recs.offset = 0; } else { recs.offset = Math.max(0, recs.offset + delta); }
    loadRecords($("env").value).catch(failed);
  }

  async function loadDeleted(env) {
    const res = await get("/api/deleted", { env, limit: 200 });
    $("deleted-count").textContent = "(" + res.total + ")";
    rows("deleted", res.deleted, (tr, d) => {
      cell(tr, d.ref); cell(tr, d.version); cell(tr, short(d.deleted_at)); versionsButton(tr, env, d.ref);
    });
    const more = res.total - res.deleted.length;
    $("deleted-more").textContent = more > 0 ? more + " more not shown (arca list --deleted shows them all)" : "";
  }

  // versionsButton adds to the row tr a cell whose button shows, in a row
  // under it, the kept versions of ref, or hides them again.
  function versionsButton(tr, env, ref) {
    const td = document.createElement("td");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "versions-toggle";
    b.textContent = "show";
    b.dataset.ref = ref;
    b.addEventListener("click", () => toggleVersions(tr, b, env, ref).catch(failed));
    td.appendChild(b);
    tr.appendChild(td);
  }

  // toggleVersions shows ref's kept versions under tr (number, state, when
  // each was written: never a value), or removes them when shown.
  async function toggleVersions(tr, b, env, ref) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("versions")) {
      next.remove();
      b.textContent = "show";
      return;
    }
    b.disabled = true;
    let h;
    try {
      h = await get("/api/history", { env, ref });
    } finally {
      b.disabled = false;
    }
    const row = document.createElement("tr");
    row.className = "versions";
    row.dataset.ref = ref;
    const td = document.createElement("td");
    td.colSpan = tr.children.length;
    const table = document.createElement("table");
    const head = table.createTHead().insertRow();
    for (const t of ["version", "state", "written"]) {
      const th = document.createElement("th");
      th.textContent = t;
      head.appendChild(th);
    }
    const body = table.createTBody();
    for (const v of h.versions) {
      const r = body.insertRow();
      cell(r, v.version); cell(r, v.state, "state-" + v.state); cell(r, short(v.written_at));
    }
    td.appendChild(table);
    if (h.deleted_at) {
      const p = document.createElement("p");
      p.className = "note";
      p.textContent = "deleted " + short(h.deleted_at);
      td.appendChild(p);
    }
    row.appendChild(td);
    tr.after(row);
    b.textContent = "hide";
  }

  // load reads every part of the page for the env chosen. While it runs
  // the body is aria-busy and the loading overlay shows; data-ready is set
  // only once every part is on the page, so that a screenshot taken on it
  // is the page, not its loading state.
  async function load() {
    const env = $("env").value;
    document.body.setAttribute("aria-busy", "true");
    delete document.body.dataset.ready;
    $("loading").hidden = false;
    $("status").textContent = "loading…";
    $("status").className = "";
    try {
      await Promise.all([loadHealth(env), loadRecords(env), loadDeleted(env), ui.loadTrail(env)]);
      $("status").textContent = "";
      document.body.dataset.ready = "true";
    } catch (e) {
      failed(e);
    } finally {
      document.body.setAttribute("aria-busy", "false");
      $("loading").hidden = true;
    }
  }

  async function start() {
    const res = await get("/api/envs");
    for (const e of res.envs) {
      const o = document.createElement("option");
      o.value = o.textContent = e;
      $("env").appendChild(o);
    }
    $("env").addEventListener("change", () => { recs.offset = 0; $("detail").hidden = true; load(); });
    $("r-prev").addEventListener("click", () => pageRecords(-pageRows));
    $("r-next").addEventListener("click", () => pageRecords(pageRows));
    $("r-search").addEventListener("click", () => pageRecords(0, $("r-q").value.trim()));
    $("r-q").addEventListener("keydown", (e) => { if (e.key === "Enter") pageRecords(0, $("r-q").value.trim()); });
    $("f-apply").addEventListener("click", () => ui.loadTrail($("env").value).catch(failed));
    $("range-reset").addEventListener("click", () => ui.chooseRange("", ""));
    $("detail-close").addEventListener("click", () => { $("detail").hidden = true; });
    await load();
  }

  // The helpers trail.js uses; it adds loadTrail, showDetail and
  // chooseRange.
  const ui = { get, cell, rows, short, ago, failed };
  window.arcaUI = ui;

  takeToken();
  // The URL opened again in this tab (a later run on the same port, say)
  // changes only the fragment: take its token and load again.
  window.addEventListener("hashchange", () => { if (takeToken()) location.reload(); });
  // trail.js runs after this script, before DOMContentLoaded.
  document.addEventListener("DOMContentLoaded", () => start().catch((e) => {
    failed(e);
    document.body.setAttribute("aria-busy", "false");
    $("loading").hidden = true;
  }));
})();
