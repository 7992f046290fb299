/* tierline: small enhancements only. Every page works without this file. */
(function () {
  "use strict";

  function announce(region, text) {
    if (!region) return;
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 30);
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    // Fallback for plain-http hosts: select a temporary textarea and use execCommand.
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(area);
      if (ok) { resolve(); } else { reject(new Error("copy failed")); }
    });
  }

  /* "Copy as Markdown": buttons are hidden in the HTML and shown only when they can work. */
  function initCopyButtons() {
    var buttons = document.querySelectorAll("button[data-copy-from]");
    Array.prototype.forEach.call(buttons, function (button) {
      var source = document.getElementById(button.getAttribute("data-copy-from"));
      var status = document.getElementById(button.getAttribute("data-copy-status"));
      if (!source) return;
      button.hidden = false;
      button.addEventListener("click", function () {
        copyText(source.textContent).then(function () {
          announce(status, button.getAttribute("data-copy-done") || "Copied as Markdown.");
        }, function () {
          announce(status, "Could not copy; select the text below instead.");
        });
      });
    });
  }

  /* Compare picker: count the ticked builds, keep the button honest (2 to 6 builds), and
     submit a tidy ?builds=a,b,c URL instead of repeated parameters. */
  function initComparePicker() {
    var form = document.getElementById("compare-form");
    if (!form) return;
    var boxes = document.querySelectorAll("input[type=checkbox][form=compare-form]");
    var count = document.querySelector("[data-compare-count]");
    var submit = form.querySelector("button[type=submit]");
    var min = parseInt(form.getAttribute("data-min") || "2", 10);
    var max = parseInt(form.getAttribute("data-max") || "6", 10);

    function ticked() {
      return Array.prototype.filter.call(boxes, function (b) { return b.checked; })
        .map(function (b) { return b.value; });
    }

    function update() {
      var n = ticked().length;
      if (count) {
        count.textContent = n === 1 ? "1 build selected" : n + " builds selected";
      }
      if (submit) submit.disabled = n < min || n > max;
    }

    Array.prototype.forEach.call(boxes, function (b) { b.addEventListener("change", update); });
    form.addEventListener("submit", function (event) {
      var slugs = ticked();
      if (slugs.length < min || slugs.length > max) {
        event.preventDefault();
        return;
      }
      event.preventDefault();
      var params = new URLSearchParams();
      var extra = form.querySelectorAll("input[type=hidden]");
      Array.prototype.forEach.call(extra, function (input) {
        if (input.name !== "builds" && input.value) params.append(input.name, input.value);
      });
      params.set("builds", slugs.join(","));
      window.location.assign(form.getAttribute("action") + "?" + params.toString().replace(/%2C/g, ","));
    });
    update();
  }

  /* Calculator: show only the fields of the chosen build and model sources. */
  function initSourceToggles() {
    var groups = document.querySelectorAll("[data-toggle-group]");
    Array.prototype.forEach.call(groups, function (group) {
      var name = group.getAttribute("data-toggle-group");
      var radios = document.querySelectorAll("input[type=radio][name='" + name + "']");
      function update() {
        var chosen = "";
        Array.prototype.forEach.call(radios, function (r) { if (r.checked) chosen = r.value; });
        var panels = document.querySelectorAll("[data-toggle-panel^='" + name + ":']");
        Array.prototype.forEach.call(panels, function (panel) {
          panel.hidden = panel.getAttribute("data-toggle-panel") !== name + ":" + chosen;
        });
      }
      Array.prototype.forEach.call(radios, function (r) { r.addEventListener("change", update); });
      update();
    });
  }

  /* After a form is submitted, move focus to what it answered (the result heading, the count,
     or the error notices) instead of leaving keyboard users at the top of a new page. A flag in
     sessionStorage marks "this page load came from a submit", so ordinary visits keep the
     browser's focus. Without JavaScript, forms whose action carries a #fragment still scroll. */
  var FOCUS_KEY = "tierline:focus-after-submit";
  var RESULT_SELECTORS = ["#result", "#results", "#result-count", "[data-result-target]"];

  function rememberSubmit(event) {
    var form = event.target;
    if (!form || form.tagName !== "FORM") return;
    var method = (form.getAttribute("method") || "get").toLowerCase();
    if (method !== "get" && method !== "post") return;
    var action = new URL(form.getAttribute("action") || window.location.href, window.location.href);
    try {
      window.sessionStorage.setItem(FOCUS_KEY, JSON.stringify({
        path: action.pathname,
        target: form.getAttribute("data-result") || ""
      }));
    } catch (e) { /* storage disabled: nothing to remember */ }
  }

  function resultTarget(wanted) {
    var errors = document.querySelector("main .notices .notice, main .field-error");
    if (errors) return errors.closest(".notices") || errors;
    var selectors = wanted ? [wanted].concat(RESULT_SELECTORS) : RESULT_SELECTORS;
    for (var i = 0; i < selectors.length; i++) {
      var found = document.querySelector(selectors[i]);
      if (found) return found;
    }
    var forms = document.querySelectorAll("main form");
    var last = forms.length ? forms[forms.length - 1] : null;
    var headings = document.querySelectorAll("main h2, main [role=status]");
    for (var j = 0; j < headings.length; j++) {
      if (!last || (last.compareDocumentPosition(headings[j]) & Node.DOCUMENT_POSITION_FOLLOWING)) {
        return headings[j];
      }
    }
    return null;
  }

  function focusResultAfterSubmit() {
    var saved = null;
    try {
      saved = JSON.parse(window.sessionStorage.getItem(FOCUS_KEY) || "null");
      window.sessionStorage.removeItem(FOCUS_KEY);
    } catch (e) { saved = null; }
    if (!saved || saved.path !== window.location.pathname) return;
    var target = resultTarget(saved.target);
    if (!target) return;
    if (!target.hasAttribute("tabindex") && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) {
      target.setAttribute("tabindex", "-1");
    }
    target.classList.add("focus-target");
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: "start" });
  }

  function init() {
    document.addEventListener("submit", rememberSubmit, true);
    focusResultAfterSubmit();
    initCopyButtons();
    initComparePicker();
    initSourceToggles();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
