// The playground: paste a reply or a transcript, see what `extract` sees.
//
// Posts {text, profile, schema | schema_name, coerce, format} to
// /api/extract as you type (debounced) and on #run, then draws the answer.
// Everything from the input or the server goes into the DOM through
// textContent / createElement only: the pasted text is untrusted.
//
// DOM contract (the browser tests rely on it): #input, #profile, #schema,
// #coerce, #run, #result[data-state=idle|ok|invalid|none|error], #method,
// #value span[data-path] (.hl at error paths, title = the message),
// #errors li[data-path][data-kind], #repairs li, #coercions li,
// #candidates li[data-method][data-won], .example[data-example].

const BUILDER_KEY = "agentshape.builder.schema";
const DEBOUNCE_MS = 250;
// The server's body cap (MAX_BODY in playground.rs).
const MAX_BODY = 4 << 20;

const $ = (id) => document.getElementById(id);

const EXAMPLES = {
  fenced: {
    profile: "claude-ops",
    text: [
      "All checks ran. jellyfin is unhealthy; the rest look fine.",
      "",
      "```json",
      JSON.stringify({
        summary: "jellyfin returns HTTP 502; postgres and nginx are healthy.",
        events: [{ level: "critical", service: "jellyfin", message: "HTTP 502 for 5 checks" }],
        memories: [{ key: "jellyfin:timing", value: "Takes 60s to restart" }],
        escalation: { needed: true, reason: "jellyfin down after restart" },
        services_checked: [
          { name: "jellyfin", status: "down" },
          { name: "postgres", status: "healthy" },
        ],
      }, null, 2),
      "```",
      "",
    ].join("\n"),
  },
  broken: {
    profile: "claude-ops",
    text: [
      "Here is my report:",
      "{'summary': 'nginx restarted', // cut short by the agent",
      " 'events': [{'level': 'Warning', 'message': \"reload took 40s\",}],",
      " escalation: {needed: False},",
      " 'services_checked': [{'name': 'nginx', 'status': 'healthy'}",
    ].join("\n"),
  },
  markers: {
    profile: "claude-ops",
    text: [
      "Checked jellyfin and postgres.",
      "[EVENT:critical:jellyfin] HTTP 502 after restart",
      "[EVENT:info:postgres] replication lag 0s",
      "[MEMORY:timing:jellyfin] takes 60s to come back",
    ].join("\n"),
  },
  invariant: {
    profile: "code-review",
    text: JSON.stringify({
      findings: [
        { severity: "blocker", file: "src/auth.rs", line: 42, description: "token compared with ==", raisedBy: "security" },
        { severity: "nit", file: "src/lib.rs", line: 7, description: "typo", raisedBy: "style" },
      ],
      counts: { blocker: 0, major: 0, minor: 0, nit: 1 },
    }, null, 2),
  },
  prose: {
    profile: "claude-ops",
    text: "All services look healthy. Nothing to report this time.",
  },
};

const input = $("input");
const profile = $("profile");
const schema = $("schema");
const coerce = $("coerce");
const format = $("format");
const result = $("result");

let timer = null;
let inflight = null;
let seq = 0;

// ---- building blocks -------------------------------------------------------

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** A JSON Pointer token for `key` (RFC 6901). */
function token(key) {
  return String(key).replaceAll("~", "~0").replaceAll("/", "~1");
}

function setState(state, message) {
  result.dataset.state = state;
  $("verdict").textContent = state;
  $("verdict").className = "badge " + ({ ok: "ok", invalid: "bad", none: "warn", error: "bad" }[state] || "muted");
  $("message").textContent = message || "";
}

// ---- the value, with a span per node ---------------------------------------

/**
 * Render `value` into `parent` as pretty-printed JSON: each value in a span
 * with data-path (its JSON Pointer); spans at error paths get .hl and the
 * messages as their title.
 */
function renderValue(parent, value, path, indent, errorsAt) {
  const span = el("span", "jv");
  span.dataset.path = path;
  const msgs = errorsAt.get(path);
  if (msgs) {
    span.classList.add("hl");
    span.title = msgs.join("\n");
  }
  const pad = "  ".repeat(indent + 1);
  const close = "  ".repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) {
      span.append("[]");
    } else {
      span.append("[\n");
      value.forEach((item, i) => {
        span.append(pad);
        renderValue(span, item, `${path}/${i}`, indent + 1, errorsAt);
        span.append(i + 1 < value.length ? ",\n" : "\n");
      });
      span.append(close + "]");
    }
  } else if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length === 0) {
      span.append("{}");
    } else {
      span.append("{\n");
      keys.forEach((k, i) => {
        span.append(pad);
        span.append(el("span", "jk", JSON.stringify(k)));
        span.append(": ");
        renderValue(span, value[k], `${path}/${token(k)}`, indent + 1, errorsAt);
        span.append(i + 1 < keys.length ? ",\n" : "\n");
      });
      span.append(close + "}");
    }
  } else {
    span.classList.add(value === null ? "jnull" : `j${typeof value}`);
    span.append(JSON.stringify(value));
  }
  parent.append(span);
}

function findValueSpan(path) {
  for (const s of $("value").querySelectorAll("span[data-path]")) {
    if (s.dataset.path === path) return s;
  }
  return null;
}

/** The span of `path`, or of its nearest ancestor that exists (a missing property). */
function nearestSpan(path) {
  let p = path;
  for (;;) {
    const s = findValueSpan(p);
    if (s || p === "") return s;
    p = p.slice(0, p.lastIndexOf("/"));
  }
}

// ---- the answer ------------------------------------------------------------

const REASONS = {
  first: "won: the first candidate that gives a value (no schema)",
  valid: "won: validates against the schema",
  fewest_errors: "won: nothing validated; fewest errors",
  not_json: "lost: not JSON, even after repairs",
  no_markers: "lost: no markers in the text",
  invalid: "lost: does not validate; a later candidate did",
  more_errors: "lost: more errors than the winner (or as many, later)",
  weak_unused: "lost: weak (more likely prose), kept for last and not reached",
  not_reached: "not tried: an earlier candidate already won",
  not_allowed: "not offered: the profile does not allow this method",
};

function show(answer) {
  const method = answer.method || "none";
  $("method").textContent = method;
  const state = method === "none" ? "none" : answer.valid ? "ok" : "invalid";
  const nErr = (answer.errors || []).length;
  setState(state, state === "invalid" ? `${nErr} error${nErr === 1 ? "" : "s"}` : "");
  const run = answer.run;
  $("format-note").textContent = answer.format && answer.format !== "text"
    ? ` · decoded as ${answer.format}${run && run.error ? ` · agent error: ${run.error}` : ""}`
    : "";

  // Errors, indexed by instance path for the value's highlights.
  const errorsAt = new Map();
  for (const e of answer.errors || []) {
    const list = errorsAt.get(e.instance_path) || [];
    list.push(e.message);
    errorsAt.set(e.instance_path, list);
  }
  const value = $("value");
  clear(value);
  if (answer.value !== null && answer.value !== undefined) {
    renderValue(value, answer.value, "", 0, errorsAt);
  } else {
    value.append(el("span", "muted", "(no value)"));
  }

  const errors = $("errors");
  clear(errors);
  for (const e of answer.errors || []) {
    const li = el("li", `err-${e.kind || "schema"}`);
    li.dataset.path = e.instance_path;
    li.dataset.kind = e.kind || "schema";
    const link = el("a", "mono", e.instance_path || "(root)");
    link.href = "#value";
    link.addEventListener("click", (ev) => {
      ev.preventDefault();
      const target = nearestSpan(e.instance_path);
      if (target) {
        target.scrollIntoView({ block: "center" });
        target.classList.remove("flash");
        void target.offsetWidth;
        target.classList.add("flash");
      }
    });
    li.append(el("span", "badge", li.dataset.kind), " ", link, " ", e.message);
    if (e.rule) li.append(" ", el("code", "muted", e.rule));
    errors.append(li);
  }

  const repairs = $("repairs");
  clear(repairs);
  for (const r of answer.repairs || []) repairs.append(el("li", "mono", r));

  const coercions = $("coercions");
  clear(coercions);
  for (const c of answer.coercions || []) {
    const li = el("li");
    li.dataset.path = c.instance_path;
    const to = "to" in c ? JSON.stringify(c.to) : "(removed)";
    li.append(el("code", null, c.instance_path || "(root)"), ` ${c.kind}: ${JSON.stringify(c.from)} → ${to}`);
    coercions.append(li);
  }

  const cands = $("candidates");
  clear(cands);
  for (const c of answer.candidates || []) {
    const li = el("li", c.won ? "won" : "lost");
    li.dataset.method = c.method;
    li.dataset.won = c.won ? "true" : "false";
    li.dataset.reason = c.reason;
    const head = el("div");
    head.append(el("span", c.won ? "badge ok" : "badge muted", c.won ? "won" : c.reason === "not_reached" ? "not tried" : "lost"),
      " ", el("strong", null, c.source), c.method !== c.source ? ` → ${c.method}` : "");
    if (c.span) {
      const where = c.piece && c.piece !== "text" ? ` of the ${c.piece} text` : "";
      head.append(el("span", "muted", ` · bytes ${c.span[0]}–${c.span[1]}${where}`));
    }
    if (c.weak) head.append(el("span", "muted", " · weak"));
    if (c.valid === false) head.append(el("span", "bad", ` · ${c.errors} error${c.errors === 1 ? "" : "s"}`));
    li.append(head, el("div", "muted", REASONS[c.reason] || c.reason));
    if ((c.repairs || []).length) li.append(el("div", "mono", "repairs: " + c.repairs.join(", ")));
    if (c.excerpt) li.append(el("pre", "pg-excerpt", c.excerpt));
    if (Array.isArray(c.span_utf16)) {
      li.classList.add("selectable");
      li.title = "Select this span in the input";
      li.addEventListener("click", () => {
        input.focus();
        input.setSelectionRange(c.span_utf16[0], c.span_utf16[1]);
      });
    }
    cands.append(li);
  }
}

function showError(message) {
  $("method").textContent = "–";
  setState("error", message);
  for (const id of ["value", "errors", "repairs", "coercions", "candidates"]) clear($(id));
}

// ---- running ---------------------------------------------------------------

function request() {
  const body = {
    text: input.value,
    profile: profile.value || null,
    coerce: coerce.checked,
    format: format ? format.value : "auto",
  };
  const s = schema.value;
  if (s === "builder") {
    const raw = sessionStorage.getItem(BUILDER_KEY);
    if (!raw) throw new Error("the schema builder has no schema in this tab yet");
    try { body.schema = JSON.parse(raw); } catch { throw new Error("the builder's schema is not JSON"); }
  } else if (s) {
    body.schema_name = s;
  }
  return body;
}

async function run() {
  clearTimeout(timer);
  timer = null;
  const mine = ++seq;
  if (inflight) inflight.abort();
  inflight = new AbortController();
  let body;
  try { body = request(); } catch (e) { showError(e.message); return; }
  const payload = JSON.stringify(body);
  if (new TextEncoder().encode(payload).length > MAX_BODY) {
    showError("the input is over 4 MiB: the server does not read it");
    return;
  }
  try {
    const resp = await fetch("/api/extract", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: payload,
      credentials: "same-origin",
      signal: inflight.signal,
    });
    let answer;
    try { answer = await resp.json(); } catch { answer = { error: `HTTP ${resp.status}` }; }
    if (mine !== seq) return;
    if (!resp.ok) { showError(answer.error || `HTTP ${resp.status}`); return; }
    show(answer);
  } catch (e) {
    if (e.name === "AbortError" || mine !== seq) return;
    showError(`request failed: ${e.message}`);
  }
}

function later() {
  clearTimeout(timer);
  timer = setTimeout(run, DEBOUNCE_MS);
}

// ---- the schema list -------------------------------------------------------

/** Names from GET /api/schemas, whatever its exact shape; none on a 404. */
async function loadSchemas() {
  let list = [];
  try {
    const resp = await fetch("/api/schemas", { credentials: "same-origin" });
    if (resp.ok) {
      const data = await resp.json();
      const items = Array.isArray(data) ? data : (data.schemas || data.files || []);
      list = items.map((x) => (typeof x === "string" ? x : x && (x.name || x.file))).filter((x) => typeof x === "string");
    }
  } catch { /* no schema list: none, builder and profiles still work */ }
  for (const name of list) {
    const opt = el("option", null, name);
    opt.value = name;
    schema.append(opt);
  }
  const note = $("schema-note");
  if (note) note.textContent = sessionStorage.getItem(BUILDER_KEY) ? "" : "The builder has not passed a schema to this tab yet.";
}

// ---- wiring ----------------------------------------------------------------

input.addEventListener("input", later);
coerce.addEventListener("change", run);
if (format) format.addEventListener("change", run);
profile.addEventListener("change", () => {
  if (profile.value) schema.value = "";
  run();
});
schema.addEventListener("change", () => {
  if (schema.value) profile.value = "";
  run();
});
$("run").addEventListener("click", run);
for (const b of document.querySelectorAll(".example")) {
  b.addEventListener("click", () => {
    const ex = EXAMPLES[b.dataset.example];
    if (!ex) return;
    input.value = ex.text;
    profile.value = ex.profile || "";
    schema.value = "";
    run();
  });
}

loadSchemas();
if (input.value.trim() !== "") run();
