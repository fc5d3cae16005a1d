// The schema builder (issue 9, item 4; seed 002's form, whole).
//
// The form is the source of truth: the schema is rebuilt from the `.field`
// elements on every input and shown in #preview, exactly
// JSON.stringify(schema, null, 2). Lint and the x-invariants compile check
// run on the server (/api/lint, /api/invariants) 300 ms after the last change.
// A schema opened from --schemas is parsed back into fields; whatever the
// form cannot express is kept as is (and said so), never dropped.
//
// Agent or user text reaches the DOM only through textContent and
// createElement: no innerHTML anywhere in this file.

const STORAGE_KEY = "agentshape.builder.schema";
const NAME_KEY = "agentshape.builder.name";
const TYPES = ["string", "integer", "number", "boolean", "enum", "object", "array"];
const ITEM_TYPES = ["string", "integer", "number", "boolean", "enum", "object"];
const DEBOUNCE_MS = 300;

const $ = (id) => document.getElementById(id);

// What the form cannot express, kept verbatim so saving does not lose it.
const fieldExtras = new WeakMap(); // .field -> keys of the field's own schema
const itemExtras = new WeakMap(); // .field (array) -> keys of its `items` schema
const keptProps = new WeakMap(); // .kept-field -> {name, schema, required}
let rootExtras = {}; // keys of the root schema
let listItemExtras = {}; // keys of the root `items` object in list mode
let ruleMessages = new Map(); // x-invariants rule -> its message

/** An element with attributes and children (strings become text nodes). */
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === undefined || v === null) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c !== null && c !== undefined) e.append(c);
  }
  return e;
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function options(select, values) {
  for (const v of values) select.append(el("option", { value: v, text: v }));
}

/** A constraint input wrapped in its label; `key` names the class `f-<key>`. */
function constraint(key, label, attrs) {
  return el("label", { class: `c c-${key}` }, label, el("input", { class: `f-${key}`, ...attrs }));
}

/** A new `.field` element, filled from `data` (a parsed field or defaults). */
function makeField(data = {}) {
  const type = el("select", { class: "f-type", "aria-label": "type" });
  options(type, TYPES);
  type.value = data.type || "string";
  const items = el("select", { class: "f-items", "aria-label": "item type" });
  options(items, ITEM_TYPES);
  items.value = data.items || "string";
  const required = el("input", { class: "f-required", type: "checkbox" });
  required.checked = data.required !== false;
  const field = el(
    "div",
    { class: "field" },
    el(
      "div",
      { class: "f-row" },
      el("input", { class: "f-name", type: "text", placeholder: "name", "aria-label": "name", spellcheck: "false" }),
      type,
      el("label", { class: "f-check" }, required, " required"),
      el("input", { class: "f-description", type: "text", placeholder: "description", "aria-label": "description" }),
      el(
        "span",
        { class: "f-buttons" },
        el("button", { type: "button", class: "f-up secondary", title: "Move up", text: "↑" }),
        el("button", { type: "button", class: "f-down secondary", title: "Move down", text: "↓" }),
        el("button", { type: "button", class: "f-add-child secondary", title: "Add a nested field", text: "+ nested" }),
        el("button", { type: "button", class: "f-remove danger", title: "Remove", text: "✕" }),
      ),
    ),
    el(
      "div",
      { class: "f-constraints" },
      el("label", { class: "c c-items" }, "items", items),
      constraint("minimum", "minimum", { type: "number", step: "any" }),
      constraint("maximum", "maximum", { type: "number", step: "any" }),
      constraint("minLength", "minLength", { type: "number", min: "0", step: "1" }),
      constraint("maxLength", "maxLength", { type: "number", min: "0", step: "1" }),
      constraint("pattern", "pattern", { type: "text", spellcheck: "false" }),
      constraint("enum", "values (comma-separated)", { type: "text", spellcheck: "false" }),
      constraint("minItems", "minItems", { type: "number", min: "0", step: "1" }),
      constraint("maxItems", "maxItems", { type: "number", min: "0", step: "1" }),
    ),
    el("p", { class: "kept-note muted", hidden: true }),
    el("div", { class: "children" }),
  );
  const set = (key, v) => {
    if (v !== undefined && v !== null) part(field, key).value = String(v);
  };
  set("name", data.name);
  set("description", data.description);
  for (const k of ["minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems"]) {
    set(k, data[k]);
  }
  if (Array.isArray(data.enum)) set("enum", data.enum.join(", "));
  if (data.extras && Object.keys(data.extras).length) fieldExtras.set(field, data.extras);
  if (data.itemExtras && Object.keys(data.itemExtras).length) itemExtras.set(field, data.itemExtras);
  for (const child of data.children || []) childrenOf(field).append(makeEntry(child));
  update(field);
  return field;
}

/**
 * A property the form cannot express (`anyOf`, `$ref`, ...), kept in its
 * place and saved unchanged; it can only be removed.
 */
function makeKept(kept) {
  const row = el(
    "div",
    { class: "kept-field" },
    el("code", { text: kept.name }),
    el("span", { class: "muted", text: ` kept as is${kept.required ? " (required)" : ""}: ` }),
    el("code", { class: "kept-schema", text: JSON.stringify(kept.schema) }),
    el("button", { type: "button", class: "k-remove danger", title: "Remove", text: "✕" }),
  );
  keptProps.set(row, kept);
  return row;
}

/** A parsed property: a field, or a kept one. */
function makeEntry(data) {
  return Object.hasOwn(data, "schema") ? makeKept(data) : makeField(data);
}

/** The field's own input or select of class `f-<key>` (not a nested field's). */
function part(field, key) {
  return field.querySelector(`:scope > .f-row .f-${key}, :scope > .f-constraints .f-${key}`);
}

function childrenOf(field) {
  return field.querySelector(":scope > .children");
}

/** Which constraints apply to a type (for an array: to its item type, plus the array's own). */
function applies(type, items) {
  const scalar = (t) =>
    ({
      string: ["minLength", "maxLength", "pattern"],
      integer: ["minimum", "maximum"],
      number: ["minimum", "maximum"],
      enum: ["enum"],
    })[t] || [];
  if (type === "array") return ["items", "minItems", "maxItems", ...scalar(items)];
  return scalar(type);
}

/** Show the constraints, children and buttons that apply to the field's type. */
function update(field) {
  const type = part(field, "type").value;
  const items = part(field, "items").value;
  const shown = new Set(applies(type, items));
  for (const label of field.querySelectorAll(":scope > .f-constraints > .c")) {
    const key = [...label.classList].find((c) => c.startsWith("c-")).slice(2);
    label.hidden = !shown.has(key);
  }
  const nests = type === "object" || (type === "array" && items === "object");
  childrenOf(field).hidden = !nests;
  field.querySelector(":scope > .f-row .f-add-child").hidden = !nests;
  const extras = Object.keys(fieldExtras.get(field) || {}).concat(
    Object.keys(itemExtras.get(field) || {}).map((k) => `items.${k}`),
  );
  const note = field.querySelector(":scope > .kept-note");
  note.hidden = extras.length === 0;
  note.textContent = extras.length ? `kept as is: ${extras.join(", ")}` : "";
}

// ---- form -> schema -------------------------------------------------------

function intOf(field, key) {
  const input = part(field, key);
  const raw = input.value.trim();
  input.classList.remove("invalid");
  if (raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    input.classList.add("invalid");
    return undefined;
  }
  return n;
}

function numOf(field, key) {
  const input = part(field, key);
  const raw = input.value.trim();
  input.classList.remove("invalid");
  if (raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) {
    input.classList.add("invalid");
    return undefined;
  }
  return n;
}

function enumOf(field) {
  return part(field, "enum")
    .value.split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

/** Put `v` under `k` unless it is undefined. */
function put(s, k, v) {
  if (v !== undefined) s[k] = v;
}

/** The schema of a scalar `type` with the field's constraints. */
function scalarSchema(field, type) {
  if (type === "enum") return { type: "string", enum: enumOf(field) };
  const s = { type };
  if (type === "string") {
    put(s, "minLength", intOf(field, "minLength"));
    put(s, "maxLength", intOf(field, "maxLength"));
    const pattern = part(field, "pattern").value;
    if (pattern !== "") s.pattern = pattern;
  } else if (type === "integer" || type === "number") {
    put(s, "minimum", numOf(field, "minimum"));
    put(s, "maximum", numOf(field, "maximum"));
  }
  return s;
}

/** An object schema from the fields of `container`: closed, with `required`. */
function objectSchema(container) {
  const properties = {};
  const required = [];
  for (const field of container.children) {
    const kept = keptProps.get(field);
    if (kept) {
      if (Object.hasOwn(properties, kept.name)) continue;
      properties[kept.name] = kept.schema;
      if (kept.required) required.push(kept.name);
      continue;
    }
    if (!field.classList.contains("field")) continue;
    const nameInput = part(field, "name");
    const name = nameInput.value.trim();
    nameInput.classList.toggle("invalid", name !== "" && Object.hasOwn(properties, name));
    if (name === "" || Object.hasOwn(properties, name)) continue;
    properties[name] = fieldSchema(field);
    if (part(field, "required").checked) required.push(name);
  }
  const s = { type: "object", properties };
  if (required.length) s.required = required;
  s.additionalProperties = false;
  return s;
}

/** One field's schema: type, description, constraints, then what was kept. */
function fieldSchema(field) {
  const type = part(field, "type").value;
  const description = part(field, "description").value.trim();
  let s;
  if (type === "object") {
    s = objectSchema(childrenOf(field));
  } else if (type === "array") {
    const itemType = part(field, "items").value;
    const items = itemType === "object" ? objectSchema(childrenOf(field)) : scalarSchema(field, itemType);
    s = { type: "array", items: { ...items, ...(itemExtras.get(field) || {}) } };
    put(s, "minItems", intOf(field, "minItems"));
    put(s, "maxItems", intOf(field, "maxItems"));
  } else {
    s = scalarSchema(field, type);
  }
  if (description !== "") s = { type: s.type, description, ...s };
  return { ...s, ...(fieldExtras.get(field) || {}) };
}

/** The x-invariants rules of the textarea, one per line. */
function rulesOf() {
  return $("invariants")
    .value.split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((rule) => (ruleMessages.has(rule) ? { rule, message: ruleMessages.get(rule) } : { rule }));
}

/** The whole schema the form describes. */
function buildSchema() {
  const head = {};
  const tail = {};
  for (const [k, v] of Object.entries(rootExtras)) (k.startsWith("$") ? head : tail)[k] = v;
  const s = { ...head };
  const title = $("schema-title").value.trim();
  const description = $("schema-description").value.trim();
  if (title !== "") s.title = title;
  if (description !== "") s.description = description;
  const object = objectSchema($("fields"));
  if ($("mode").value === "list") {
    s.type = "array";
    s.items = { ...object, ...listItemExtras };
  } else {
    Object.assign(s, object);
  }
  const rules = rulesOf();
  if (rules.length) s["x-invariants"] = rules;
  return { ...s, ...tail };
}

// ---- schema -> form (Open) ------------------------------------------------

const nonNegInt = (v) => Number.isInteger(v) && v >= 0;
const SCALAR_KEYS = {
  string: { minLength: nonNegInt, maxLength: nonNegInt, pattern: (v) => typeof v === "string" },
  integer: { minimum: Number.isFinite, maximum: Number.isFinite },
  number: { minimum: Number.isFinite, maximum: Number.isFinite },
  boolean: {},
};

/** Take `sub`'s scalar type and constraints into `data`; false if it is no scalar the form knows. */
function takeScalar(sub, data, typeKey) {
  const isEnum =
    Array.isArray(sub.enum) &&
    sub.enum.length > 0 &&
    sub.enum.every((v) => typeof v === "string" && !v.includes(",") && v.trim() === v && v !== "") &&
    (sub.type === undefined || sub.type === "string");
  if (isEnum) {
    data[typeKey] = "enum";
    data.enum = sub.enum;
    delete sub.enum;
    delete sub.type;
    return true;
  }
  if (!Object.hasOwn(SCALAR_KEYS, sub.type)) return false;
  data[typeKey] = sub.type;
  for (const [k, ok] of Object.entries(SCALAR_KEYS[sub.type])) {
    if (Object.hasOwn(sub, k) && ok(sub[k])) {
      data[k] = sub[k];
      delete sub[k];
    }
  }
  delete sub.type;
  return true;
}

/** Fields of an object schema, in order; returns [fields and kept properties, leftover keys]. */
function parseObject(schema) {
  const rest = { ...schema };
  if (rest.type === "object") delete rest.type;
  const props = isObject(rest.properties) ? rest.properties : {};
  delete rest.properties;
  const required =
    Array.isArray(rest.required) && rest.required.every((r) => typeof r === "string") ? rest.required : [];
  if (Array.isArray(rest.required) && rest.required.every((r) => Object.hasOwn(props, r))) delete rest.required;
  if (rest.additionalProperties === false) delete rest.additionalProperties;
  const entries = [];
  for (const [name, sub] of Object.entries(props)) {
    const data = parseField(name, sub, required.includes(name));
    entries.push(data || { name, schema: sub, required: required.includes(name) });
  }
  return [entries, rest];
}

function isObjectSchema(s) {
  return isObject(s) && (s.type === "object" || (s.type === undefined && isObject(s.properties)));
}

/** One property as field data, or null when the form cannot express it. */
function parseField(name, schema, required) {
  if (!isObject(schema)) return null;
  const sub = { ...schema };
  const data = { name, required };
  if (typeof sub.description === "string") {
    data.description = sub.description;
    delete sub.description;
  }
  if (isObjectSchema(sub)) {
    data.type = "object";
    [data.children, data.extras] = parseObject(sub);
    return data;
  }
  if (sub.type === "array") {
    data.type = "array";
    for (const k of ["minItems", "maxItems"]) {
      if (Object.hasOwn(sub, k) && nonNegInt(sub[k])) {
        data[k] = sub[k];
        delete sub[k];
      }
    }
    if (!isObject(sub.items)) return null;
    const items = { ...sub.items };
    if (isObjectSchema(items)) {
      data.items = "object";
      [data.children, data.itemExtras] = parseObject(items);
    } else if (takeScalar(items, data, "items")) {
      data.itemExtras = items;
    } else {
      return null;
    }
    delete sub.type;
    delete sub.items;
    data.extras = sub;
    return data;
  }
  if (!takeScalar(sub, data, "type")) return null;
  data.extras = sub;
  return data;
}

/** Replace the form with `schema`. */
function load(schema) {
  $("fields").replaceChildren();
  rootExtras = {};
  listItemExtras = {};
  ruleMessages = new Map();
  $("schema-title").value = "";
  $("schema-description").value = "";
  $("invariants").value = "";
  $("mode").value = "single";
  if (!isObject(schema)) {
    return;
  }
  const rest = { ...schema };
  for (const k of ["title", "description"]) {
    if (typeof rest[k] === "string") {
      $(`schema-${k}`).value = rest[k];
      delete rest[k];
    }
  }
  const rules = rest["x-invariants"];
  if (
    Array.isArray(rules) &&
    rules.every(
      (r) =>
        isObject(r) &&
        typeof r.rule === "string" &&
        !r.rule.includes("\n") &&
        (r.message === undefined || typeof r.message === "string") &&
        Object.keys(r).every((k) => k === "rule" || k === "message"),
    )
  ) {
    $("invariants").value = rules.map((r) => r.rule).join("\n");
    for (const r of rules) if (r.message !== undefined) ruleMessages.set(r.rule, r.message);
    delete rest["x-invariants"];
  }
  let object = null;
  if (rest.type === "array" && isObjectSchema(rest.items)) {
    $("mode").value = "list";
    object = rest.items;
    delete rest.type;
    delete rest.items;
  } else if (isObjectSchema(rest)) {
    object = rest;
  }
  if (object) {
    const [entries, leftover] = parseObject(object);
    for (const data of entries) $("fields").append(makeEntry(data));
    if (object === rest) rootExtras = leftover;
    else {
      rootExtras = rest;
      listItemExtras = leftover;
    }
  } else {
    rootExtras = rest;
  }
}

// ---- output: preview, storage, download, checks ---------------------------

let downloadUrl = null;
let checkTimer = null;
let checkSeq = 0;

function fileName() {
  const name = $("schema-name").value.trim();
  if (name === "") return "schema.json";
  return name.endsWith(".json") ? name : `${name}.json`;
}

function showKeptRoot() {
  const keys = Object.keys(rootExtras).concat(Object.keys(listItemExtras).map((k) => `items.${k}`));
  const kept = $("kept");
  kept.replaceChildren();
  if (keys.length) {
    kept.append(
      el("p", { class: "muted" }, "Kept as is (the form cannot edit these; they are saved unchanged): ", el("code", { text: keys.join(", ") })),
    );
  }
}

/** Rebuild the schema from the form and show it everywhere. */
function render() {
  const schema = buildSchema();
  const text = JSON.stringify(schema, null, 2);
  $("preview").textContent = text;
  try {
    sessionStorage.setItem(STORAGE_KEY, text);
    sessionStorage.setItem(NAME_KEY, $("schema-name").value);
  } catch {
    // Storage full or disabled: the playground falls back to its own input.
  }
  if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  downloadUrl = URL.createObjectURL(new Blob([`${text}\n`], { type: "application/json" }));
  const dl = $("download");
  dl.href = downloadUrl;
  dl.download = fileName();
  showKeptRoot();
  $("lint").dataset.state = "pending";
  $("invariants-status").dataset.ok = "pending";
  clearTimeout(checkTimer);
  checkTimer = setTimeout(() => check(schema), DEBOUNCE_MS);
}

async function postJson(path, value) {
  try {
    const res = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(value),
    });
    const data = await res.json().catch(() => ({}));
    return res.ok ? data : { error: data.error || `HTTP ${res.status}` };
  } catch (e) {
    return { error: String(e) };
  }
}

async function check(schema) {
  const seq = ++checkSeq;
  const [lint, inv] = await Promise.all([
    postJson("/api/lint", { schema }),
    postJson("/api/invariants", { schema }),
  ]);
  if (seq !== checkSeq) return; // a newer change is being checked
  showLint(lint);
  showInvariants(inv);
}

function showLint(res) {
  const box = $("lint");
  box.replaceChildren();
  box.dataset.state = res.error ? "error" : "ready";
  if (res.error) {
    box.append(el("p", { class: "bad", text: `lint failed: ${res.error}` }));
    return;
  }
  for (const [name, p] of Object.entries(res.providers || {})) {
    const accepted = p.accepted === true;
    const findings = Array.isArray(p.findings) ? p.findings : [];
    const list = el("ul", { class: "findings" });
    for (const f of findings) {
      const fixes = Array.isArray(f.fix) ? f.fix : [];
      list.append(
        el(
          "li",
          { class: "finding", "data-severity": f.severity, "data-pointer": f.pointer },
          el("span", { class: `badge ${f.severity === "error" ? "bad" : "warn"}`, text: f.severity }),
          " ",
          el("code", { class: "path", text: f.pointer === "" ? "(root)" : f.pointer }),
          " ",
          el("span", { class: "message", text: f.message }),
          fixes.length
            ? el("div", { class: "fix", text: `fix: ${fixes.join("; ")}` })
            : el("div", { class: "fix muted", text: f.fixable ? "fix: lint --fix rewrites this" : "no automatic fix" }),
        ),
      );
    }
    const section = el(
      "div",
      { class: "provider card", "data-provider": name, "data-accepts": String(accepted) },
      el(
        "h3",
        {},
        `${name}: `,
        el("span", { class: accepted ? "ok" : "bad", text: accepted ? "accepts" : "rejects" }),
        el("span", { class: "muted", text: ` (${findings.length} finding${findings.length === 1 ? "" : "s"})` }),
      ),
    );
    if (findings.length) section.append(list);
    if (p.fixed && Array.isArray(p.fixed.changes) && p.fixed.changes.length) {
      section.append(
        el(
          "details",
          {},
          el("summary", { text: `what lint --fix sends ${name} (${p.fixed.changes.length} changes)` }),
          el("pre", { text: JSON.stringify(p.fixed.schema, null, 2) }),
        ),
      );
    }
    box.append(section);
  }
}

function showInvariants(res) {
  const box = $("invariants-status");
  box.replaceChildren();
  if (res.ok === undefined) {
    box.dataset.ok = "false";
    box.className = "bad";
    box.append(`check failed: ${res.error}`);
    return;
  }
  const rules = Array.isArray(res.rules) ? res.rules : [];
  box.dataset.ok = String(res.ok === true);
  box.className = res.ok ? "ok" : "bad";
  if (res.ok) {
    box.append(rules.length === 1 ? "1 rule compiles" : rules.length ? `${rules.length} rules compile` : "no rules");
    return;
  }
  const broken = rules.filter((r) => !r.ok);
  if (broken.length === 0) box.append(el("span", { text: res.error }));
  for (const r of broken) box.append(el("div", { class: "rule-error", "data-index": r.index, text: r.error }));
}

// ---- actions --------------------------------------------------------------

function setStatus(state, text) {
  const s = $("save-status");
  s.dataset.state = state;
  s.className = state === "saved" ? "ok" : state === "" ? "muted" : "bad";
  s.textContent = text;
}

function addOpenOption(name) {
  const open = $("open");
  if ([...open.options].some((o) => o.value === name)) return;
  open.append(el("option", { value: name, text: name }));
}

async function save(overwrite = false) {
  if ($("schema-name").value.trim() === "") {
    setStatus("error", "name the schema first (for example review.json)");
    return;
  }
  const name = fileName();
  if ($("schema-name").value !== name) {
    $("schema-name").value = name;
    render();
  }
  const url = `/api/schemas/${encodeURIComponent(name)}${overwrite ? "?overwrite=true" : ""}`;
  let res;
  let data = {};
  try {
    res = await fetch(url, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: $("preview").textContent,
    });
    data = await res.json().catch(() => ({}));
  } catch (e) {
    setStatus("error", `not saved: ${e}`);
    return;
  }
  if (res.ok) {
    setStatus("saved", `saved ${name}`);
    addOpenOption(name);
  } else if (res.status === 409 && data.exists === true) {
    // eslint-disable-next-line no-alert
    if (!overwrite && window.confirm(`schema ${name} exists: overwrite?`)) {
      await save(true);
    } else {
      setStatus("exists", `not saved: ${name} exists`);
    }
  } else {
    setStatus("error", `not saved: ${data.error || `HTTP ${res.status}`}`);
  }
}

async function openSelected() {
  const name = $("open").value;
  if (name === "") return;
  try {
    const res = await fetch(`/api/schemas/${encodeURIComponent(name)}`);
    const data = await res.json().catch(() => ({}));
    if (!res.ok) {
      setStatus("error", `cannot open ${name}: ${data.error || `HTTP ${res.status}`}`);
      return;
    }
    load(data);
    $("schema-name").value = name;
    setStatus("", `opened ${name}`);
    render();
  } catch (e) {
    setStatus("error", `cannot open ${name}: ${e}`);
  }
}

function movable(e) {
  return e.classList.contains("field") || e.classList.contains("kept-field");
}

function onFieldButton(event) {
  const button = event.target.closest("button");
  if (!button) return;
  if (button.classList.contains("k-remove")) {
    button.closest(".kept-field").remove();
    render();
    return;
  }
  const field = button.closest(".field");
  if (!field) return;
  const parent = field.parentElement;
  if (button.classList.contains("f-up")) {
    let prev = field.previousElementSibling;
    while (prev && !movable(prev)) prev = prev.previousElementSibling;
    if (prev) parent.insertBefore(field, prev);
  } else if (button.classList.contains("f-down")) {
    let next = field.nextElementSibling;
    while (next && !movable(next)) next = next.nextElementSibling;
    if (next) parent.insertBefore(next, field);
  } else if (button.classList.contains("f-remove")) {
    field.remove();
  } else if (button.classList.contains("f-add-child")) {
    const child = makeField();
    childrenOf(field).append(child);
    part(child, "name").focus();
  } else {
    return;
  }
  render();
}

function onFieldInput(event) {
  const field = event.target.closest(".field");
  if (field) update(field);
  render();
}

function start() {
  $("add-field").addEventListener("click", () => {
    const field = makeField();
    $("fields").append(field);
    part(field, "name").focus();
    render();
  });
  const fields = $("fields");
  fields.addEventListener("click", onFieldButton);
  fields.addEventListener("input", onFieldInput);
  fields.addEventListener("change", onFieldInput);
  for (const id of ["mode", "schema-title", "schema-description", "invariants", "schema-name"]) {
    $(id).addEventListener("input", render);
    $(id).addEventListener("change", render);
  }
  $("save").addEventListener("click", () => save(false));
  $("open").addEventListener("change", openSelected);
  $("open-button").addEventListener("click", openSelected);
  restore();
  render();
}

/**
 * Back from the playground (or a reload) in the same tab: the form comes
 * back from sessionStorage, which holds what the preview last showed.
 */
function restore() {
  let saved = null;
  let name = null;
  try {
    saved = sessionStorage.getItem(STORAGE_KEY);
    name = sessionStorage.getItem(NAME_KEY);
  } catch {
    return;
  }
  if (!saved) return;
  try {
    load(JSON.parse(saved));
  } catch {
    return;
  }
  if (name) $("schema-name").value = name;
  setStatus("", "restored from this tab");
}

start();
