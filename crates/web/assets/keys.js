// Note [Keys]: keyboard moves on every page (issue 41 §2).
// - j / k: on a session's page, the next / previous turn: a transcript
//   row (`.line`, the transcript's DOM contract) whose data-type is
//   `user_text` (a prompt) or `text` (an answer), skipping rows that are
//   not drawn. The current one gets class `current` and
//   aria-current="true" and is scrolled into view. The first j goes to the
//   first turn below the top of the window, so reading on from where one
//   scrolled works.
// - /: the page's search box (the Sessions list's `q`); a page without one
//   goes to /sessions#search, where this script focuses it.
// - ?: the keys' help (a <dialog>; Esc closes it, as does its button).
// Nothing happens while a person types in a field, or with Ctrl, Alt or
// Meta held (the browser's own shortcuts stay theirs).

const TURNS = '.line[data-type="user_text"], .line[data-type="text"]';

function typing(el) {
  if (!el) return false;
  if (el.isContentEditable) return true;
  const tag = el.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag !== "INPUT") return false;
  // A checkbox or a button takes no text: keys still work there.
  return !["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"].includes(el.type);
}

function turns() {
  return Array.from(document.querySelectorAll(TURNS)).filter(
    (el) => !el.hidden && el.getClientRects().length > 0,
  );
}

function move(step) {
  const all = turns();
  if (all.length === 0) return;
  const now = document.querySelector(".line.current");
  let i = now ? all.indexOf(now) : -1;
  if (i < 0) {
    // From where the window is: the first turn below its top (j), or the
    // last one above it (k).
    const below = all.findIndex((el) => el.getBoundingClientRect().top >= 0);
    if (step > 0) i = below < 0 ? all.length - 1 : below;
    else i = below <= 0 ? 0 : below - 1;
  } else {
    i = Math.min(all.length - 1, Math.max(0, i + step));
  }
  const next = all[i];
  if (now && now !== next) {
    now.classList.remove("current");
    now.removeAttribute("aria-current");
  }
  next.classList.add("current");
  next.setAttribute("aria-current", "true");
  next.scrollIntoView({ block: "center" });
}

function searchBox() {
  return document.querySelector('input[type="search"][name="q"]');
}

function focusSearch() {
  const box = searchBox();
  if (box) {
    box.focus();
    box.select();
  } else {
    location.assign("/sessions#search");
  }
}

const help = document.getElementById("keys-help");

function openHelp() {
  if (!help || help.open) return;
  if (typeof help.showModal === "function") help.showModal();
  else help.setAttribute("open", "");
}

function closeHelp() {
  if (!help) return;
  if (typeof help.close === "function") help.close();
  else help.removeAttribute("open");
}

document.addEventListener("keydown", (e) => {
  if (e.defaultPrevented || e.ctrlKey || e.altKey || e.metaKey) return;
  if (typing(e.target) || typing(document.activeElement)) return;
  if (help && help.open) {
    if (e.key === "?") { e.preventDefault(); closeHelp(); }
    return; // Esc is the dialog's own.
  }
  switch (e.key) {
    case "j": e.preventDefault(); move(1); break;
    case "k": e.preventDefault(); move(-1); break;
    case "/": e.preventDefault(); focusSearch(); break;
    case "?": e.preventDefault(); openHelp(); break;
    default: break;
  }
});

const close = document.getElementById("keys-help-close");
if (close) close.addEventListener("click", closeHelp);
const link = document.getElementById("keys-link");
if (link) link.addEventListener("click", (e) => { e.preventDefault(); openHelp(); });

if (location.hash === "#search") {
  const box = searchBox();
  if (box) box.focus();
}
