"use strict";
// arca secret requests: the page on which a human types a secret an agent
// asked for (page.js does the token, the reads and what the views share).
// The value is sent in the POST's body alone and its field is emptied at
// once; the answer holds the version stored, never the value. body's
// data-phase: login, loaded, stored or failed.
(function () {
  const onePath = /^\/requests\/rq_[0-9a-f]{32}$/;
  const validID = /^rq_[0-9a-f]{32}$/;
  const page = window.arcaPage(["list", "request"], (data) => {
    if (onePath.test(location.pathname)) show(data.request);
    else showList(data.requests);
  });
  const { $ } = page;

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
    $("expires").textContent = page.expires(v.expires_at);
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
      li.appendChild(document.createTextNode(" — " + asker(v) + "; expires " + page.expires(v.expires_at)));
      ul.appendChild(li);
    }
    $("none").hidden = ul.children.length > 0;
    $("list").hidden = false;
  }

  async function store() {
    const body = { value: $("value").value };
    $("value").value = "";
    try {
      page.say("storing…");
      const data = await page.call("POST", body);
      show(data.request);
      page.say("Stored as version " + data.request.version + ".");
      page.phase("stored");
    } catch (e) {
      page.failed(e);
    }
  }

  $("value-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    store();
  });
})();
