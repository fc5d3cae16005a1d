// The live feed for every page: one EventSource on /api/feed.
//
// follow(after, onRow): calls onRow(row) for every feed row after the id
// `after` (a number; null = only rows from now on), in order, once each:
// the server resumes from Last-Event-ID when the browser reconnects.
// row = {id, session_id, kind, created_at, body}; kind is one of
// "started", "event", "partial", "ended", "feed_gap", "hook" (a call of
// `agentshape hook`).
// Agent text in a row is untrusted: set it with textContent, never innerHTML.

const KINDS = ["started", "event", "partial", "ended", "feed_gap", "hook"];

export function follow(after, onRow) {
  const url = after === null || after === undefined ? "/api/feed" : `/api/feed?after=${Number(after)}`;
  const source = new EventSource(url);
  const status = document.getElementById("live-status");
  let last = after ?? -1;
  const handle = (ev) => {
    let row;
    try { row = JSON.parse(ev.data); } catch { return; }
    if (typeof row.id === "number" && row.id <= last) return;
    last = row.id;
    onRow(row);
  };
  for (const k of KINDS) source.addEventListener(k, handle);
  source.addEventListener("open", () => {
    if (status) { status.textContent = "live"; status.classList.add("on"); }
  });
  source.addEventListener("error", () => {
    if (status) { status.textContent = "reconnecting…"; status.classList.remove("on"); }
  });
  return source;
}
