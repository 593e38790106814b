"use strict";
// arca approvals: the page of a session's pending approvals (page.js does
// the token, the reads and what the views share). A decision is a POST of
// the chosen scope to the approval's URL. body's data-phase: login,
// loaded, decided or failed.
(function () {
  const onePath = /^\/approvals\/ap_[0-9a-f]{32}$/;
  const validID = /^ap_[0-9a-f]{32}$/;
  const page = window.arcaPage(["list", "approval"], (data) => {
    if (onePath.test(location.pathname)) show(data.approval);
    else showList(data.approvals);
  });
  const { $ } = page;

  function show(v) {
    $("summary").textContent = v.summary;
    $("reason").textContent = v.reason || "(none given)";
    $("fingerprint").textContent = v.fingerprint;
    $("expires").textContent = page.expires(v.expires_at);
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
      li.appendChild(document.createTextNode(" — " + (v.reason || "no reason given") + "; expires " + page.expires(v.expires_at)));
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
      page.say(grant ? "approving…" : "denying…");
      const data = await page.call("POST", body);
      show(data.approval);
      page.say("This approval is " + data.approval.state + ".");
      page.phase("decided");
    } catch (e) {
      page.failed(e);
    }
  }

  $("approve").addEventListener("click", () => decide(true));
  $("deny").addEventListener("click", () => decide(false));
  $("uses-n").addEventListener("input", () => { $("scope-uses").checked = true; });
  $("minutes-n").addEventListener("input", () => { $("scope-minutes").checked = true; });
})();
