// Note [Theme]: the pages follow the system's light or dark setting
// (prefers-color-scheme) until a person picks one with the nav's button;
// the pick is kept in this browser (localStorage "agentshape-theme") and
// set as <html data-theme="light|dark">, which app.css honours over the
// media query. This is a classic script in <head> (not a module, not
// deferred): it runs before the body is drawn, so a stored theme is the
// first one painted. The button is wired once the document is parsed.
(function () {
  "use strict";
  var KEY = "agentshape-theme";
  var root = document.documentElement;
  var dark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function stored() {
    try { return window.localStorage.getItem(KEY); } catch (e) { return null; }
  }
  function apply(theme) {
    if (theme === "light" || theme === "dark") root.setAttribute("data-theme", theme);
    else root.removeAttribute("data-theme");
  }
  function current() {
    var t = root.getAttribute("data-theme");
    if (t === "light" || t === "dark") return t;
    return dark && dark.matches ? "dark" : "light";
  }
  function label(button) {
    var now = current();
    button.textContent = now === "dark" ? "☾ Dark" : "☀ Light";
    button.setAttribute("aria-label", "Theme: " + now + ". Switch to " + (now === "dark" ? "light" : "dark"));
    button.setAttribute("data-current", now);
  }

  apply(stored());

  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("theme-toggle");
    if (!button) return;
    label(button);
    button.addEventListener("click", function () {
      var next = current() === "dark" ? "light" : "dark";
      apply(next);
      try { window.localStorage.setItem(KEY, next); } catch (e) { /* kept for this page only */ }
      label(button);
    });
    // The system's setting changes, or another tab picks a theme.
    if (dark && dark.addEventListener) dark.addEventListener("change", function () { label(button); });
    window.addEventListener("storage", function (e) {
      if (e.key === KEY) { apply(e.newValue); label(button); }
    });
  });
})();
