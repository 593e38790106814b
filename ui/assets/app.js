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

  async function loadRecords(env) {
    const res = await get("/api/records", { env, limit: 200 });
    $("records-count").textContent = "(" + res.total + ")";
    rows("records", res.records, (tr, r) => {
      cell(tr, r.ref); cell(tr, r.version); cell(tr, short(r.created_at)); cell(tr, short(r.updated_at));
      cell(tr, short(r.rotated_at)); cell(tr, ago(r.since_rotation_s)); versionsButton(tr, env, r.ref);
    });
    const more = res.total - res.records.length;
    $("records-more").textContent = more > 0 ? more + " more not shown (arca list shows them all)" : "";
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
    b.addEventListener("click", () => toggleVersions(tr, b, env, ref).catch((e) => {
      $("status").textContent = e.message;
      $("status").className = "failed";
    }));
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

  function drawChart(buckets) {
    const fig = $("chart");
    const old = fig.querySelector("svg");
    if (old) old.remove();
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    const w = 960, h = 160, n = Math.max(buckets.length, 1), bw = w / n;
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.setAttribute("width", "100%");
    svg.setAttribute("height", h);
    svg.setAttribute("preserveAspectRatio", "none");
    const max = Math.max(1, ...buckets.map((b) => b.ok + b.denied + b.error));
    buckets.forEach((b, i) => {
      let y = h;
      for (const k of ["ok", "denied", "error"]) {
        if (!b[k]) continue;
        const bh = (b[k] / max) * (h - 10);
        y -= bh;
        const r = document.createElementNS(ns, "rect");
        r.setAttribute("x", i * bw + 1); r.setAttribute("y", y);
        r.setAttribute("width", Math.max(bw - 2, 1)); r.setAttribute("height", bh);
        r.setAttribute("class", k);
        const t = document.createElementNS(ns, "title");
        t.textContent = b.start + ": " + b[k] + " " + k;
        r.appendChild(t);
        svg.appendChild(r);
      }
    });
    fig.insertBefore(svg, fig.firstChild);
  }

  function filters(env) {
    const f = { env, limit: 200 };
    for (const k of ["since", "until", "ref", "op", "outcome", "actor", "user", "host"]) {
      const v = $("f-" + k).value.trim();
      if (v) f[k] = v;
    }
    return f;
  }

  async function loadTrail(env) {
    const t = await get("/api/audit", filters(env));
    $("matched").textContent = t.matched;
    drawChart(t.chart);
    const broken = t.chains.filter((c) => !c.ok);
    const chain = $("chain");
    chain.className = broken.length ? "broken" : "held";
    chain.textContent = broken.length
      ? "The chain does NOT hold: " + broken.map((c) => c.file + ": " + c.break).join("; ")
      : "The chain holds: " + t.chains.map((c) => c.file + " (" + c.events + " events" + (c.anchor ? ", anchor " + c.anchor : "") + ")").join("; ");
    rows("denied", t.denied, (tr, e) => {
      cell(tr, short(e.ts)); cell(tr, e.ref); cell(tr, e.actor);
      cell(tr, e.policy ? (e.policy.reason || "denied") : e.message, "msg");
    });
    rows("events", t.events, (tr, e) => {
      cell(tr, short(e.ts)); cell(tr, e.seq); cell(tr, e.event); cell(tr, e.outcome, e.outcome === "ok" ? "ok" : e.outcome === "denied" ? "denied" : e.outcome ? "error" : "");
      cell(tr, e.env); cell(tr, e.ref); cell(tr, e.actor); cell(tr, e.user); cell(tr, e.host); cell(tr, e.message, "msg");
    });
  }

  async function load() {
    const env = $("env").value;
    $("status").textContent = "loading…";
    $("status").className = "";
    try {
      await Promise.all([loadHealth(env), loadRecords(env), loadDeleted(env), loadTrail(env)]);
      $("status").textContent = "";
      document.body.dataset.loaded = "true";
    } catch (e) {
      $("status").textContent = e.message;
      $("status").className = "failed";
    }
  }

  async function start() {
    const res = await get("/api/envs");
    for (const e of res.envs) {
      const o = document.createElement("option");
      o.value = o.textContent = e;
      $("env").appendChild(o);
    }
    $("env").addEventListener("change", load);
    $("f-apply").addEventListener("click", () => loadTrail($("env").value).catch((e) => { $("status").textContent = e.message; }));
    await load();
  }

  takeToken();
  // The URL opened again in this tab (a later run on the same port, say)
  // changes only the fragment: take its token and load again.
  window.addEventListener("hashchange", () => { if (takeToken()) location.reload(); });
  start().catch((e) => { $("status").textContent = e.message; $("status").className = "failed"; });
})();
