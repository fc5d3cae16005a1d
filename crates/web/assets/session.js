// The session page's live parts (GET /sessions/{id}).
//
// - An error's pointer link focuses the value it names in #output (the
//   server already marks those values with class "hl"; this adds "focus").
// - While the session is running (#session[data-status="running"]), or
//   keeps growing (data-live="open": imported, or recorded by a hook): every
//   feed row of THIS session after data-after is appended to #transcript as
//   one .line, built like the server builds it; on "ended" the status badge
//   and the verdict are updated, then the page reloads once so the output,
//   verdict and rows render on the server.
// Agent text is untrusted: it only ever goes in through textContent.

import { follow } from "./live.js";

const QUIET = ["message", "end", "partial"];

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function firstLine(s) {
  const text = String(s ?? "");
  const line = text.trimStart().split("\n")[0];
  const cut = [...line].slice(0, 120).join("");
  return cut.length < text.trim().length ? cut + "…" : cut;
}

function pretty(v) {
  try { return JSON.stringify(v, null, 2) ?? ""; } catch { return ""; }
}

function details(tag, tagClass, name, summaryText, bodyText, open) {
  const d = el("details");
  if (open) d.open = true;
  const s = el("summary");
  s.appendChild(el("span", tagClass, tag));
  if (name !== null) {
    s.appendChild(document.createTextNode(" "));
    s.appendChild(el("span", "tool-name", name));
  }
  s.appendChild(document.createTextNode(" " + summaryText));
  d.appendChild(s);
  d.appendChild(el("pre", "", bodyText));
  return d;
}

function count(n) {
  return Number.isFinite(n) ? Math.trunc(n).toLocaleString("en-US") : "0";
}

function isError(type, ev) {
  return (type === "tool_result" && ev.is_error === true) || type === "tool_error" || type === "api_error";
}

// One .line for one feed row (the same shape as transcript.rs renders;
// the model of a turn and the hiding of a message's earlier usage rows are
// the server's: a live row shows its own).
export function lineOf(row) {
  const body = row.body && typeof row.body === "object" ? row.body : {};
  const ev = body.event && typeof body.event === "object" ? body.event : {};
  const type = row.kind === "event" ? String(ev.type ?? "") : "";
  const err = row.kind === "event" && isError(type, ev);
  const line = el("div", `line k-${row.kind} t-${type || "none"}` + (body.truncated === true ? " cut" : "") + (err ? " err" : ""));
  line.id = "row-" + String(row.id);
  // An imported row: the time of its line in the agent's file.
  if (Number.isInteger(body.line) && typeof row.created_at === "string") {
    const t = el("time", "ts", row.created_at.slice(11, 19));
    t.setAttribute("datetime", row.created_at);
    t.title = `${row.created_at} · line ${body.line}`;
    line.append(t, " ");
  }
  line.dataset.feedId = String(row.id);
  line.dataset.kind = String(row.kind);
  if (type) line.dataset.type = type;
  if (row.kind === "event" && QUIET.includes(type)) line.hidden = true;
  if (row.kind === "event") {
    switch (type) {
      case "text":
        line.append(String(ev.text ?? ""));
        break;
      case "user_text":
        line.append(el("span", "tag user", "user"), " ", el("span", "text", ev.text));
        break;
      case "usage": {
        const t = ev.tokens && typeof ev.tokens === "object" ? ev.tokens : {};
        const u = el("span", "usage muted", ev.cumulative === true ? "tokens so far · " : "tokens · ");
        u.append(el("span", "tin", count(t.input)), " in · ", el("span", "tout", count(t.output)), " out");
        if (typeof ev.model === "string") u.append(" · ", el("span", "usage-model", ev.model));
        line.appendChild(u);
        break;
      }
      case "compaction": {
        const d = el("div", "compaction");
        d.setAttribute("role", "separator");
        let text = "context compacted";
        if (typeof ev.trigger === "string") text += ` · ${ev.trigger}`;
        if (Number.isFinite(ev.pre_tokens)) text += ` · ${count(ev.pre_tokens)} tokens before`;
        d.appendChild(el("span", "divider", text));
        line.appendChild(d);
        break;
      }
      case "compact_summary": {
        const d = details("compact summary", "tag", null, firstLine(ev.text), String(ev.text ?? ""));
        d.className = "compact-summary";
        line.appendChild(d);
        break;
      }
      case "tool_error": {
        const s = el("span", "bad", "tool error · ");
        s.appendChild(el("span", "tool-name", ev.name));
        line.appendChild(s);
        break;
      }
      case "api_error":
        line.appendChild(el("span", "bad", `API error (${ev.category ?? ""}): ${ev.message ?? ""}`));
        break;
      case "thinking":
        line.appendChild(details("thinking", "tag", null, firstLine(ev.text), String(ev.text ?? "")));
        break;
      case "tool_use": {
        const input = JSON.stringify(ev.input ?? null);
        line.appendChild(details("tool", "tag", String(ev.name ?? ""), firstLine(input), pretty(ev.input ?? null)));
        break;
      }
      case "tool_result": {
        const err = ev.is_error === true;
        const content = typeof ev.content === "string" ? ev.content : null;
        line.appendChild(details(err ? "tool error" : "result", err ? "tag bad" : "tag", null,
          content === null ? "(content not kept)" : firstLine(content),
          content ?? "The decoder keeps no tool-result text; the forensic log has it."));
        break;
      }
      case "init":
        line.appendChild(el("span", "muted", `init · model ${ev.model ?? ""}`));
        break;
      case "result": {
        const info = ev.info ?? {};
        line.appendChild(el("span", "muted", `result · ${info.subtype ?? ""}` + (info.is_error === true ? " · error" : "")));
        break;
      }
      case "skipped":
        line.appendChild(el("span", "muted", `line ${ev.line ?? ""} skipped (${ev.reason ?? ""})`));
        break;
      case "warning":
        line.appendChild(el("span", "warn", `warning: ${ev.message ?? ""}`));
        break;
      case "other":
        line.appendChild(el("span", "muted", String(ev.kind ?? "")));
        break;
      default:
        line.appendChild(el("span", "muted", type));
    }
  } else if (row.kind === "partial") {
    line.appendChild(details("partial output", "tag", null, "", pretty(body.value ?? null), true));
  } else if (row.kind === "started") {
    line.appendChild(el("span", "muted", `started · tier ${body.tier ?? ""}`));
  } else if (row.kind === "ended") {
    line.appendChild(el("span", "muted", `ended · ${body.status ?? ""}`));
  } else if (row.kind === "feed_gap") {
    line.appendChild(el("span", "warn", `${body.dropped ?? "some"} lines not shown (feed gap)`));
  } else if (row.kind === "hook") {
    // One call of `agentshape hook` (the same text transcript.rs renders).
    const verdict = String(body.verdict ?? "");
    const s = el("span", "hook " + (verdict === "blocked" || verdict === "gave_up" ? "bad" : "muted"));
    s.append(el("span", "tag", "hook"), " " + String(body.event ?? ""));
    if (typeof body.agent_type === "string" && body.agent_type) s.append(" · " + body.agent_type);
    s.append(" · ", el("span", "verdict", verdict));
    if (Number.isInteger(body.blocks) && body.blocks > 0) s.append(` · block ${body.blocks}`);
    const n = Array.isArray(body.errors) ? body.errors.length : 0;
    if (n > 0) s.append(` · ${n} error${n > 1 ? "s" : ""}`);
    line.appendChild(s);
  } else {
    line.appendChild(el("span", "muted", `${row.kind} ${JSON.stringify(row.body)}`));
  }
  return line;
}

function setStatus(root, status) {
  root.dataset.status = status;
  const badge = document.getElementById("session-status");
  if (badge) {
    badge.textContent = status;
    badge.className = `badge s-${status}`;
  }
}

function setVerdict(body) {
  const v = document.getElementById("verdict");
  if (!v || typeof body.valid !== "boolean") return;
  const n = Number(body.errors ?? 0);
  v.dataset.valid = String(body.valid);
  v.className = `badge ${body.valid ? "ok" : "bad"}`;
  v.textContent = body.valid ? "valid"
    : n === 1 ? "1 error" : n > 1 ? `${n} errors` : "invalid: no structured output";
}

function focusLinks() {
  for (const a of document.querySelectorAll("#errors a[data-target]")) {
    a.addEventListener("click", () => {
      for (const f of document.querySelectorAll("#output .focus")) f.classList.remove("focus");
      const target = document.getElementById(a.dataset.target);
      if (target) {
        target.classList.add("hl", "focus");
        target.scrollIntoView({ block: "center" });
      }
    });
  }
}

function live(root) {
  const id = root.dataset.sessionId;
  const transcript = document.getElementById("transcript");
  const after = Number(root.dataset.after ?? 0);
  let done = false;
  const source = follow(Number.isFinite(after) ? after : 0, (row) => {
    if (done || row.session_id !== id || !transcript) return;
    if (row.kind === "partial") {
      for (const old of transcript.querySelectorAll('.line[data-kind="partial"]')) old.hidden = true;
    }
    transcript.appendChild(lineOf(row));
    if (row.kind === "ended") {
      done = true;
      const body = row.body && typeof row.body === "object" ? row.body : {};
      setStatus(root, String(body.status ?? "ended"));
      setVerdict(body);
      source.close();
      // Once: the reloaded page is no longer running, so it follows nothing.
      window.location.reload();
    }
  });
}

const root = document.getElementById("session");
if (root) {
  focusLinks();
  // A page of the transcript that is not the last one does not follow.
  // An imported or hook-recorded session (data-live="open") keeps growing
  // after it shows completed (session.rs's Note [Sessions that stay open]).
  const open = root.dataset.status === "running" || root.dataset.live === "open";
  if (open && root.dataset.follow !== "false") live(root);
}
