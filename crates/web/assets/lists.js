// The live parts of the Sessions and Events pages.
//
// Sessions (table#sessions): on the first page, a session that starts is
// added at the top when it can match the page's filters (what the `started`
// row tells: tier, profile, agent; a status filter other than running,
// an error category or an extraction method cannot match a session that
// has just started); a session that ends gets its new status badge.
// Events (table#events): each `ended` row means new events may be stored;
// they are fetched with /api/events?after=<newest shown> and prepended.
// Every value from the feed or the API goes into the DOM as text.

import { follow } from "./live.js";

function cell(text, className) {
  const td = document.createElement("td");
  if (className) td.className = className;
  td.textContent = text ?? "";
  return td;
}

function sessionLink(id) {
  const a = document.createElement("a");
  a.href = "/sessions/" + encodeURIComponent(id);
  a.textContent = id;
  return a;
}

function badge(status) {
  const span = document.createElement("span");
  span.className = "badge status s-" + status;
  span.textContent = status;
  return span;
}

// A row of any of the table's bodies (the Sessions list has one per
// family: a session and its sub-agents, Note [Disclosure without script]).
function findRow(tbody, attr, value) {
  const table = tbody.closest("table");
  for (const body of table ? table.tBodies : [tbody]) {
    for (const tr of body.rows) if (tr.getAttribute(attr) === value) return tr;
  }
  return null;
}

// The "nothing yet" paragraph after a table (id "<table id>-empty").
function dropEmptyState(tbody) {
  const table = tbody.closest("table");
  const empty = table && document.getElementById(table.id + "-empty");
  if (empty) empty.remove();
}

function when(at) {
  return typeof at === "string" ? at.slice(0, 19).replace("T", " ") : "";
}

function sessionsPage(table) {
  const tbody = table.tBodies[0];
  const d = table.dataset;
  const firstPage = d.firstPage === "true";
  const canMatchStart = (row, body) => {
    if (d.status && d.status !== "running") return false;
    if (d.errorCategory || d.method) return false;
    // A session that starts has no verdict yet.
    if (d.verdict || d.failingPath) return false;
    if (d.tier && String(body.tier ?? 1) !== d.tier) return false;
    if (d.profile && body.profile !== d.profile) return false;
    // One agent, two names (the store's Note [One agent, two names]).
    const agent = (a) => ({ claude: "claude-code", gemini: "gemini-cli" })[a] ?? a;
    if (d.agent && agent(body.agent) !== agent(d.agent)) return false;
    const day = String(row.created_at ?? "").slice(0, 10);
    if (d.from && day < d.from) return false;
    if (d.to && day > d.to) return false;
    if (d.project && body.project !== d.project) return false;
    if (d.q) {
      const q = d.q.toLowerCase();
      const hay = [row.session_id, body.agent, body.model].filter(Boolean).join(" ").toLowerCase();
      if (!hay.includes(q)) return false;
    }
    return true;
  };
  follow(Number(d.feedAfter), (row) => {
    const body = row.body && typeof row.body === "object" ? row.body : {};
    if (row.kind === "started") {
      if (!firstPage || !canMatchStart(row, body)) return;
      if (findRow(tbody, "data-session-id", row.session_id)) return;
      const tr = document.createElement("tr");
      tr.setAttribute("data-session-id", row.session_id);
      tr.setAttribute("data-status", "running");
      tr.className = "fresh";
      const id = cell("", "mono");
      id.append(sessionLink(row.session_id));
      const st = cell("", "status-cell");
      st.append(badge("running"));
      // One cell per header column (`data-col`): the page shows some
      // columns only when a session on it has a verdict or an error.
      const project = typeof body.project === "string" ? body.project : "";
      const cells = {
        session: () => id,
        status: () => st,
        agent: () => cell(body.agent, "agent"),
        project: () => {
          const c = cell(project.split("/").filter(Boolean).slice(-2).join("/"), "project");
          if (project) c.title = project;
          return c;
        },
        started: () => cell(when(row.created_at), "mono"),
        models: () => cell(body.model, "models"),
        tier: () => cell("", "num"),
        method: () => cell("", "method"),
        summary: () => cell("", "summary"),
      };
      for (const th of table.tHead.rows[0].cells) {
        const make = cells[th.dataset.col];
        tr.append(make ? make() : cell("", th.classList.contains("num") ? "num" : ""));
      }
      dropEmptyState(tbody);
      // Its own family, above the others.
      const family = document.createElement("tbody");
      family.className = "family";
      family.append(tr);
      table.insertBefore(family, table.tBodies[0] ?? null);
    } else if (row.kind === "ended") {
      const tr = findRow(tbody, "data-session-id", row.session_id);
      if (!tr || typeof body.status !== "string") return;
      tr.setAttribute("data-status", body.status);
      const st = tr.querySelector(".status-cell");
      if (st) st.replaceChildren(badge(body.status));
      const m = tr.querySelector(".method");
      if (m && typeof body.extraction_method === "string") m.textContent = body.extraction_method;
    }
  });
}

function eventsPage(table) {
  const tbody = table.tBodies[0];
  const d = table.dataset;
  let newest = Number(d.newest) || 0;
  let busy = false;
  let again = false;
  const refresh = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        const params = new URLSearchParams({ after: String(newest), limit: "500" });
        if (d.level) params.set("level", d.level);
        const res = await fetch("/api/events?" + params, { credentials: "same-origin" });
        if (!res.ok) return;
        const { events } = await res.json();
        // Newest first: prepend oldest first so the newest ends on top.
        for (const e of [...events].reverse()) {
          if (e.id <= newest) continue;
          newest = e.id;
          const tr = document.createElement("tr");
          tr.setAttribute("data-level", e.level);
          tr.setAttribute("data-event-id", String(e.id));
          tr.className = "fresh";
          const lv = document.createElement("span");
          lv.className = "badge l-" + e.level;
          lv.textContent = e.level;
          const lvCell = cell("");
          lvCell.append(lv);
          const sCell = cell("", "mono");
          sCell.append(sessionLink(e.session_id));
          tr.append(cell(when(e.created_at), "mono"), lvCell, sCell, cell(e.service), cell(e.message));
          dropEmptyState(tbody);
          tbody.prepend(tr);
        }
      } while (again);
    } catch {
      // The next `ended` row tries again.
    } finally {
      busy = false;
    }
  };
  follow(Number(d.feedAfter), (row) => {
    if (row.kind === "ended") refresh();
  });
}

const sessions = document.getElementById("sessions");
if (sessions && sessions.tagName === "TABLE") sessionsPage(sessions);
const events = document.getElementById("events");
if (events && events.tagName === "TABLE") eventsPage(events);
