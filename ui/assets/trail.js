"use strict";
// arca ui's audit trail: the chains of the trails read, the chart with its
// time axis and the range chosen on it, the denials and the latest
// events, and a record's detail. Everything from the server goes into the
// page as text (textContent), never as markup. app.js holds the helpers
// (window.arcaUI) and starts the page.
(function () {
  const ui = window.arcaUI;
  const $ = (id) => document.getElementById(id);
  const svgNS = "http://www.w3.org/2000/svg";

  function filters(env) {
    const f = { env, limit: 200 };
    for (const k of ["since", "until", "ref", "op", "outcome", "actor", "user", "host"]) {
      const v = $("f-" + k).value.trim();
      if (v) f[k] = v;
    }
    return f;
  }

  // verdict is the decider's verdict of an event as a line of text: allow
  // or deny, degraded when an unreachable decider let it through, and its
  // reason.
  function verdict(e) {
    if (!e.policy) return "";
    const p = e.policy;
    return (p.allow ? "allow" : "deny") + (p.degraded ? " (degraded)" : "") + (p.reason ? ": " + p.reason : "");
  }

  function outcomeClass(o) { return o === "ok" ? "ok" : o === "denied" ? "denied" : o ? "error" : ""; }

  function base(path) { const i = path.lastIndexOf("/"); return i < 0 ? path : path.slice(i + 1); }

  // eventRow fills tr with an event; file is shown when several trails
  // are read.
  function eventRow(tr, e, several) {
    ui.cell(tr, ui.short(e.ts));
    if (several) ui.cell(tr, base(e.file), "file");
    ui.cell(tr, e.seq); ui.cell(tr, e.event); ui.cell(tr, e.outcome, outcomeClass(e.outcome));
    ui.cell(tr, e.env); ui.cell(tr, e.ref); ui.cell(tr, e.actor); ui.cell(tr, e.user); ui.cell(tr, e.host);
    ui.cell(tr, e.source, e.source === "ui" ? "source-ui" : ""); ui.cell(tr, verdict(e), "verdict"); ui.cell(tr, e.message, "msg");
  }

  // showChains says whether each trail's chain holds: a line for all,
  // then one for each trail.
  function showChains(chains) {
    const broken = chains.filter((c) => !c.ok);
    const chain = $("chain");
    chain.className = broken.length ? "broken" : "held";
    chain.textContent = broken.length
      ? "The chain does NOT hold: " + broken.map((c) => c.file + ": " + c.break).join("; ")
      : "The chain holds: " + chains.map((c) => c.file + " (" + c.events + " events" + (c.anchor ? ", anchor " + c.anchor : "") + ")").join("; ");
    const ul = $("chains");
    ul.replaceChildren();
    for (const c of chains) {
      const li = document.createElement("li");
      li.dataset.ok = String(c.ok);
      li.dataset.file = c.file;
      li.className = c.ok ? "held" : "broken";
      li.textContent = c.file + ": " + (c.ok ? "holds, " + c.events + " events" : "BROKEN at " + c.break);
      ul.appendChild(li);
    }
  }

  async function loadTrail(env) {
    const t = await ui.get("/api/audit", filters(env));
    const several = t.chains.length > 1;
    document.body.classList.toggle("several-trails", several);
    $("matched").textContent = t.matched;
    drawChart(t);
    showChains(t.chains);
    ui.rows("denied", t.denied, (tr, e) => {
      ui.cell(tr, ui.short(e.ts)); if (several) ui.cell(tr, base(e.file), "file");
      ui.cell(tr, e.ref); ui.cell(tr, e.actor); ui.cell(tr, verdict(e) || e.message, "msg");
    });
    ui.rows("events", t.events, (tr, e) => eventRow(tr, e, several));
  }

  // The chart: bars of equal time from t.from to t.to, a time axis under
  // them, and a range chosen by dragging across it (it fills since and
  // until, and the trail is read again for it).
  const chart = { from: 0, to: 0, w: 960, h: 150, axis: 24 };

  function svgEl(name, attrs) {
    const el = document.createElementNS(svgNS, name);
    for (const k in attrs) el.setAttribute(k, attrs[k]);
    return el;
  }

  function tickLabel(ms, span) {
    const iso = new Date(ms).toISOString();
    if (span >= 2 * 86400000) return iso.slice(0, 10) + " " + iso.slice(11, 16);
    if (span >= 3600000) return iso.slice(5, 10) + " " + iso.slice(11, 16);
    if (span >= 60000) return iso.slice(11, 19);
    return iso.slice(11, 23); // under a minute: to the millisecond
  }

  function drawChart(t) {
    const fig = $("chart");
    const old = fig.querySelector("svg");
    if (old) old.remove();
    const buckets = t.chart || [];
    const { w, h, axis } = chart;
    const svg = svgEl("svg", { viewBox: "0 0 " + w + " " + (h + axis), width: "100%", height: h + axis, preserveAspectRatio: "none" });
    chart.from = t.from ? Date.parse(t.from) : 0;
    chart.to = t.to ? Date.parse(t.to) : 0;
    if (chart.to === chart.from) chart.to = chart.from + 1;
    svg.dataset.from = t.from || "";
    svg.dataset.to = t.to || "";
    const n = Math.max(buckets.length, 1), bw = w / n;
    const max = Math.max(1, ...buckets.map((b) => b.ok + b.denied + b.error));
    buckets.forEach((b, i) => {
      let y = h;
      for (const k of ["ok", "denied", "error"]) {
        if (!b[k]) continue;
        const bh = (b[k] / max) * (h - 10);
        y -= bh;
        const r = svgEl("rect", { x: i * bw + 1, y, width: Math.max(bw - 2, 1), height: bh, class: k });
        const title = svgEl("title", {});
        title.textContent = b.start + ": " + b[k] + " " + k;
        r.appendChild(title);
        svg.appendChild(r);
      }
    });
    svg.appendChild(svgEl("line", { x1: 0, y1: h, x2: w, y2: h, class: "axis" }));
    if (t.from) {
      const ticks = 6, span = chart.to - chart.from;
      for (let k = 0; k <= ticks; k++) {
        const x = (k / ticks) * w;
        svg.appendChild(svgEl("line", { x1: x, y1: h, x2: x, y2: h + 4, class: "axis" }));
        const label = svgEl("text", { x: Math.min(Math.max(x, 40), w - 40), y: h + 17, class: "tick", "text-anchor": "middle" });
        label.textContent = tickLabel(chart.from + (k / ticks) * span, span);
        svg.appendChild(label);
      }
    }
    const sel = svgEl("rect", { x: 0, y: 0, width: 0, height: h, class: "selection", visibility: "hidden" });
    svg.appendChild(sel);
    dragRange(svg, sel);
    fig.insertBefore(svg, fig.firstChild);
  }

  // dragRange lets a drag across svg choose a range of the chart's time.
  function dragRange(svg, sel) {
    let x0 = null;
    const at = (ev) => {
      const box = svg.getBoundingClientRect();
      return Math.min(Math.max((ev.clientX - box.left) / box.width, 0), 1) * chart.w;
    };
    svg.addEventListener("mousedown", (ev) => { x0 = at(ev); sel.setAttribute("visibility", "visible"); sel.setAttribute("x", x0); sel.setAttribute("width", 0); });
    svg.addEventListener("mousemove", (ev) => {
      if (x0 === null) return;
      const x = at(ev);
      sel.setAttribute("x", Math.min(x0, x)); sel.setAttribute("width", Math.abs(x - x0));
    });
    svg.addEventListener("mouseup", (ev) => {
      if (x0 === null) return;
      const a = Math.min(x0, at(ev)), b = Math.max(x0, at(ev));
      x0 = null;
      if (b - a < 3 || !chart.from) { sel.setAttribute("visibility", "hidden"); return; }
      const time = (x) => new Date(chart.from + (x / chart.w) * (chart.to - chart.from)).toISOString();
      chooseRange(time(a), time(b));
    });
  }

  // chooseRange reads the trail again from since to until.
  function chooseRange(since, until) {
    $("f-since").value = since;
    $("f-until").value = until;
    $("range").textContent = since && until ? "range: " + ui.short(since) + " to " + ui.short(until) : "";
    loadTrail($("env").value).catch(ui.failed);
  }

  // showDetail shows a record's detail: its metadata (from its row), its
  // kept versions and its latest events.
  async function showDetail(env, r) {
    const d = await ui.get("/api/record", { env, ref: r.ref });
    const box = $("detail");
    $("detail-ref").textContent = r.ref;
    const meta = $("detail-meta");
    meta.replaceChildren();
    for (const [k, v] of [["version", r.version], ["created", ui.short(r.created_at)], ["updated", ui.short(r.updated_at)],
      ["rotated", ui.short(r.rotated_at) || "never"], ["since rotated", ui.ago(r.since_rotation_s)]]) {
      const dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = k; dd.textContent = String(v);
      meta.append(dt, dd);
    }
    ui.rows("detail-versions", d.history.versions, (tr, v) => {
      ui.cell(tr, v.version); ui.cell(tr, v.state, "state-" + v.state); ui.cell(tr, ui.short(v.written_at));
    });
    ui.rows("detail-events", d.events, (tr, e) => eventRow(tr, e, false));
    $("detail-count").textContent = d.events.length < d.matched ? "(latest " + d.events.length + " of " + d.matched + ")" : "(" + d.matched + ")";
    box.hidden = false;
    box.dataset.ref = r.ref;
    box.scrollIntoView({ block: "start" });
  }

  ui.loadTrail = loadTrail;
  ui.showDetail = showDetail;
  ui.chooseRange = chooseRange;
})();
