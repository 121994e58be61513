// The page of chartgate ui: the list of workflows, or one workflow (?w=),
// kept live by server-sent events. Text from the store is only ever set
// as text (never as HTML); the statechart is the server's own SVG.
"use strict";

let csrf = "";
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c == null) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function showError(msg) {
  const p = $("error");
  p.textContent = msg || "";
  p.hidden = !msg;
}

function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function budgets(limits) {
  const box = el("span");
  for (const l of limits || []) {
    box.append(el("span", { class: "budget", title: l.state + (l.warn ? " (warns past the budget)" : "") },
      l.state + " ", el("meter", { min: 0, max: l.max, value: l.calls }), " " + l.calls + "/" + l.max));
  }
  return box;
}

function entryText(e) {
  if (e.kind === "transition") {
    let t = e.event + ": " + e.from + " \u2192 " + e.to;
    t += e.by ? " (by " + e.by + ")" : e.tool ? " (" + e.tool + ")" : "";
    return t;
  }
  if (e.kind === "refusal") return "refused " + e.tool + " in " + e.from + ": " + (e.reason || e.outcome) + " (" + e.outcome + ")";
  return "call " + e.tool + " " + e.outcome + " in " + e.from;
}

function approvalButtons(workflow) {
  const ok = el("button", { class: "approve", type: "button" }, "Approve");
  const no = el("button", { class: "reject", type: "button" }, "Reject");
  ok.addEventListener("click", () => decide(workflow, true, [ok, no]));
  no.addEventListener("click", () => decide(workflow, false, [ok, no]));
  return [ok, no];
}

async function decide(workflow, approve, buttons) {
  buttons.forEach((b) => (b.disabled = true));
  try {
    const res = await fetch("/api/approve", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ workflow, approve }),
    });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body.error || res.statusText);
    showError("");
  } catch (err) {
    showError((approve ? "Approving" : "Rejecting") + " failed: " + err.message);
    buttons.forEach((b) => (b.disabled = false));
  }
}

function link(workflow) {
  return "/?w=" + encodeURIComponent(workflow);
}

function renderList(rows) {
  const tbody = $("workflows").querySelector("tbody");
  tbody.replaceChildren();
  $("empty").hidden = rows.length > 0;
  for (const r of rows) {
    const name = r.workflow || "key:" + r.key;
    const tr = el("tr", { "data-workflow": name });
    tr.append(
      el("td", null, r.workflow ? el("a", { href: link(r.workflow) }, name) : name),
      el("td", null, el("code", null, r.state), " ", el("span", { class: "badge " + r.status }, r.status)),
      el("td", null, ...(r.instructions || []).map((i) => el("div", null, i))),
      el("td", null, budgets(r.limits)),
      el("td", null, r.last ? el("div", null, el("time", null, when(r.last.time)), " ", entryText(r.last)) : when(r.updated)),
    );
    const ap = el("td");
    if (r.pending) {
      ap.append(el("div", { class: "what" }, r.pending.from + " \u2192 " + r.pending.to + " on " + r.pending.event),
        r.pending.message ? el("div", null, r.pending.message) : null, approvalID(r.pending));
      if (r.workflow) ap.append(...approvalButtons(r.workflow));
    }
    tr.append(ap);
    tbody.append(tr);
  }
}

// approvalID names a pending approval as every other message about it
// does: its id, and when it expires.
function approvalID(p) {
  if (!p.id) return null;
  return el("div", { class: "approval-id" }, "approval " + p.id + (p.expires ? " \u00b7 expires " + when(p.expires) : ""));
}

function renderDetail(d) {
  $("state").textContent = d.state;
  const st = $("status");
  st.textContent = d.status;
  st.className = "badge " + d.status;
  $("budgets").replaceChildren(budgets(d.limits));
  $("instructions").replaceChildren(...(d.instructions || []).map((i) => el("li", null, i)));
  const p = $("pending");
  p.hidden = !d.pending;
  p.replaceChildren();
  if (d.pending) {
    p.append(el("div", { class: "what" }, "Waits for approval: " + d.pending.from + " \u2192 " + d.pending.to + " on " + d.pending.event),
      d.pending.message ? el("div", null, d.pending.message) : null, approvalID(d.pending), ...approvalButtons(d.workflow));
  }
  const active = new Set(d.active || []);
  for (const g of document.querySelectorAll("#chart g.state")) {
    g.classList.toggle("active", active.has(g.getAttribute("data-id")));
  }
  const items = (d.history || []).slice().reverse().map((e) => {
    const li = el("li", { class: e.kind }, el("time", null, when(e.time)), el("span", { class: "kind " + e.kind }, e.kind), entryText(e));
    if (e.rationale) li.append(el("span", { class: "rationale" }, "rationale: " + e.rationale));
    if (e.data) li.append(el("details", null, el("summary", null, "data"), el("pre", null, e.data)));
    return li;
  });
  $("timeline").replaceChildren(...items);
}

function follow(url, render) {
  const live = $("live");
  const es = new EventSource(url);
  es.onopen = () => { live.textContent = "live"; live.classList.remove("off"); };
  es.onerror = () => { live.textContent = "reconnecting"; live.classList.add("off"); };
  es.onmessage = (m) => {
    const v = JSON.parse(m.data);
    if (v && v.error) { showError(v.error); return; }
    showError("");
    render(v);
  };
}

async function main() {
  const res = await fetch("/api/session");
  if (!res.ok) { showError("Not logged in: open the link chartgate ui printed."); return; }
  csrf = (await res.json()).csrf;
  const w = new URLSearchParams(location.search).get("w");
  if (w) {
    $("title").textContent = w;
    document.title = w + " \u2014 chartgate";
    $("detail").hidden = false;
    const svg = await fetch("/api/chart");
    $("chart").innerHTML = await svg.text(); // the server's own drawing, escaped there
    follow("/events?w=" + encodeURIComponent(w), renderDetail);
  } else {
    $("list").hidden = false;
    follow("/events", renderList);
  }
}

main().catch((err) => showError(err.message));
