// askgate inbox: live list (Server-Sent Events), countdowns, filters, and A2UI action events.
// Plain JavaScript served by askgate itself; every page also works without it (forms post normally).
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var page = document.body.dataset.page;
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var URGENT = 5 * 60, SOON = 60 * 60;

  // ---- time ---------------------------------------------------------------------------------------
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function left(seconds) {
    if (seconds <= 0) return "expired";
    var d = Math.floor(seconds / 86400), h = Math.floor(seconds % 86400 / 3600),
        m = Math.floor(seconds % 3600 / 60), s = Math.floor(seconds % 60);
    if (d > 0) return d + "d " + h + "h left";
    if (h > 0) return h + "h " + pad(m) + "m left";
    if (m > 0) return m + "m " + pad(s) + "s left";
    return s + "s left";
  }
  function ago(iso) {
    var t = Date.parse(iso); if (isNaN(t)) return iso;
    var s = (Date.now() - t) / 1000;
    if (s < 45) return "just now";
    if (s < 3600) return Math.round(s / 60) + " min ago";
    if (s < 86400) return Math.round(s / 3600) + " h ago";
    return new Date(t).toLocaleString();
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-deadline]").forEach(function (el) {
      var secs = (Date.parse(el.dataset.deadline) - now) / 1000;
      var t = el.querySelector("time") || el;
      var text = left(secs);
      if (t.textContent !== text) t.textContent = text;
      var item = el.closest(".ask");
      if (item) {
        var u = secs < URGENT ? "urgent" : secs < SOON ? "soon" : "";
        item.classList.toggle("urgent", u === "urgent");
        item.classList.toggle("soon", u === "soon");
        var lab = item.querySelector("[data-urgency-label]");
        if (lab && lab.textContent !== u) lab.textContent = u;
      }
    });
    document.querySelectorAll("[data-ago]").forEach(function (el) {
      var text = ago(el.dataset.ago);
      if (el.textContent !== text) el.textContent = text;
    });
  }
  tick();
  setInterval(tick, 1000);

  // ---- list: filters and live updates ------------------------------------------------------------
  var list = document.getElementById("asks");
  var q = document.getElementById("q"), fd = document.getElementById("f-dialect"), fk = document.getElementById("f-kind");
  function matches(li) {
    var text = q ? q.value.trim().toLowerCase() : "";
    return (!text || (li.dataset.search || "").indexOf(text) >= 0) &&
      (!fd || !fd.value || li.dataset.dialect === fd.value) && (!fk || !fk.value || li.dataset.kind === fk.value);
  }
  function refresh() {
    if (!list) return;
    var shown = 0;
    list.querySelectorAll(".ask").forEach(function (li) {
      var ok = matches(li) && !li.classList.contains("leaving");
      li.hidden = !ok; if (ok) shown++;
    });
    var count = document.getElementById("count"); if (count) count.textContent = String(shown);
    var empty = document.getElementById("empty"); if (empty) empty.hidden = shown > 0;
    var waiting = list.querySelectorAll(".ask:not(.leaving)").length;  // in the tab title, for a glance
    document.title = (waiting ? "(" + waiting + ") " : "") + "Inbox · askgate";
  }
  [q, fd, fk].forEach(function (el) {
    if (!el) return;
    el.addEventListener("input", function () {
      refresh();
      var url = new URL(location.href);
      url.searchParams.set(el.name, el.value); if (!el.value) url.searchParams.delete(el.name);
      history.replaceState(null, "", url);
    });
  });
  if (list) refresh();
  var filters = document.getElementById("filters");
  if (filters) filters.addEventListener("submit", function (e) { e.preventDefault(); refresh(); });

  function upsert(data) {
    if (!list) return;
    var tmp = document.createElement("template");
    tmp.innerHTML = data.html.trim();
    var li = tmp.content.firstElementChild;
    var old = document.getElementById("ask-" + data.id);
    if (old) { old.replaceWith(li); }
    else {
      li.classList.add("fresh");
      var before = null;
      list.querySelectorAll(".ask").forEach(function (x) {
        if (!before && (x.dataset.created || "") < (li.dataset.created || "")) before = x;
      });
      list.insertBefore(li, before);
    }
    tick(); refresh();
  }
  function remove(data) {
    var li = document.getElementById("ask-" + data.id);
    if (!li) return;
    li.classList.add("leaving");
    li.setAttribute("aria-hidden", "true");
    setTimeout(function () { li.remove(); refresh(); }, 450);
    refresh();
  }

  // ---- the ask page: taken / expired while open ----------------------------------------------------
  var askId = document.body.dataset.askId;
  var submitted = false;
  function disableSurface() {
    var form = document.querySelector("form.a2ui-surface");
    if (!form) return;
    form.classList.add("disabled");
    form.querySelectorAll("input, textarea, select, button").forEach(function (x) { x.disabled = true; });
    form.setAttribute("aria-disabled", "true");
  }
  function taken(message) {
    if (submitted) return;
    var el = document.getElementById("taken");
    if (el) { el.textContent = message; el.hidden = false; }
    disableSurface();
  }

  // ---- live feed ----------------------------------------------------------------------------------
  var live = document.getElementById("live");
  function setLive(state, text) {
    if (!live) return;
    live.dataset.state = state;
    var t = live.querySelector(".live-text"); if (t) t.textContent = text;
  }
  if (live && window.EventSource && page !== "login") {
    var es = new EventSource("/inbox/events");
    var connected = false;
    es.addEventListener("hello", function () {
      setLive("live", "live");
      if (connected) catchUp();  // a reconnect: changes made while we were away were not streamed
      connected = true;
    });
    es.addEventListener("upsert", function (e) { upsert(JSON.parse(e.data)); });
    es.addEventListener("remove", function (e) {
      var data = JSON.parse(e.data);
      remove(data);
      if (askId && data.id === askId) taken(data.message);
    });
    es.addEventListener("resync", function () { if (page === "list") location.reload(); });
    es.onerror = function () { setLive("offline", "reconnecting…"); };
  }

  function catchUp() {
    if (page === "list") { location.reload(); return; }
    if (!askId || submitted) return;
    fetch(location.href, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var t = doc.getElementById("taken");
      if (t && !t.hidden && t.textContent.trim()) taken(t.textContent.trim());
    }).catch(function () {});
  }

  // ---- A2UI surface: sliders, and the action event ------------------------------------------------
  document.addEventListener("input", function (e) {
    var t = e.target;
    if (t && t.type === "range") {
      var wrap = t.closest("[data-a2ui-kind]");
      if (wrap) wrap.removeAttribute("data-a2ui-unset");
      var out = wrap && wrap.querySelector("output"); if (out) out.textContent = t.value;
    }
  });

  function offset(date) {
    var m = -date.getTimezoneOffset(), sign = m >= 0 ? "+" : "-";
    m = Math.abs(m);
    return sign + pad(Math.floor(m / 60)) + ":" + pad(m % 60);
  }
  function fieldValue(form, path) {
    var wrap = null;
    form.querySelectorAll("[data-a2ui-path]").forEach(function (w) { if (!wrap && w.dataset.a2uiPath === path) wrap = w; });
    if (!wrap) return "";
    var kind = wrap.dataset.a2uiKind;
    var input = wrap.querySelector("input:not([type=hidden]), textarea");
    if (kind === "checkbox") return input.checked;
    if (kind === "choice") {
      var c = wrap.querySelector("input[type=radio]:checked");
      return c && c.value !== "" ? [c.dataset.a2uiValue] : [];
    }
    if (kind === "multi") {
      return Array.prototype.map.call(wrap.querySelectorAll("input[type=checkbox]:checked"), function (x) { return x.dataset.a2uiValue; });
    }
    if (kind === "slider") return wrap.hasAttribute("data-a2ui-unset") ? "" : Number(input.value);
    if (kind === "datetime") {
      var v = input.value; if (!v) return "";
      if (v.length === 16) v += ":00";
      var d = new Date(v);
      return isNaN(d.getTime()) ? v : v + offset(d);
    }
    return input.value;
  }
  function buildEvent(form, button) {
    var ctx = JSON.parse(button.dataset.a2uiContext || "{}"), context = {};
    Object.keys(ctx).forEach(function (k) { if (ctx[k]) context[k] = fieldValue(form, ctx[k]); });
    return { version: "v0.9", action: {
      name: button.dataset.a2uiAction, surfaceId: form.dataset.a2uiSurface, sourceComponentId: button.value,
      timestamp: new Date().toISOString(), context: context } };
  }
  function focusFirstInvalid(host) {
    var bad = host.querySelector("[aria-invalid=true]");
    if (!bad) return;
    var target = bad.tagName === "FIELDSET" ? bad.querySelector("input") : bad;
    if (target) target.focus();
  }
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.classList || !form.classList.contains("a2ui-surface")) return;
    var button = e.submitter;
    if (!button || !button.dataset.a2uiAction) return;
    e.preventDefault();
    var event = buildEvent(form, button);
    var buttons = form.querySelectorAll("button");
    buttons.forEach(function (b) { b.disabled = true; });
    submitted = true;
    fetch(form.getAttribute("action"), {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(event)
    }).then(function (r) { return r.json().then(function (body) { return { status: r.status, body: body }; }); })
      .then(function (res) {
        var host = document.getElementById("surface"), summary = document.getElementById("fault-summary");
        if (res.status === 422 && res.body.html) {
          submitted = false;
          host.innerHTML = res.body.html;
          if (summary) summary.hidden = false;
          focusFirstInvalid(host);
          return;
        }
        if (summary) summary.hidden = true;
        if (res.status === 200) {
          var sent = document.getElementById("sent");
          sent.innerHTML = "";
          sent.appendChild(document.createTextNode("Answer sent. " + res.body.message + " "));
          var a = document.createElement("a"); a.href = "/"; a.textContent = "Back to the inbox";
          sent.appendChild(a);
          sent.hidden = false;
          disableSurface();
          sent.setAttribute("tabindex", "-1"); sent.focus();
          return;
        }
        submitted = false;
        taken(res.body.message || "Could not send the answer.");
      })
      .catch(function () {
        submitted = false;
        buttons.forEach(function (b) { b.disabled = false; });
        var el = document.getElementById("taken");
        if (el) { el.textContent = "Network problem: the answer was not sent. Try again."; el.hidden = false; }
      });
  });
})();
