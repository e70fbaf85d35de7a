// OML pages: keyboard shortcuts, the serve countdown and the inbox's live
// update. No framework, no inline script (the page policy forbids it).
(function () {
  "use strict";

  function typing(e) {
    var t = e.target;
    return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
  }

  // Help dialog, built once.
  var help;
  function toggleHelp() {
    if (!help) {
      help = document.createElement("dialog");
      help.setAttribute("aria-labelledby", "help-h");
      var h = document.createElement("h2");
      h.id = "help-h";
      h.textContent = "Keyboard";
      var ul = document.createElement("ul");
      [["a", "approve the served item"], ["r", "reject it (type a reason first; r moves you to the reason)"],
       ["n", "next: serve the next item, or skip this one"], ["?", "show or hide this help"],
       ["Esc", "leave a text field"]].forEach(function (k) {
        var li = document.createElement("li");
        var kbd = document.createElement("kbd");
        kbd.textContent = k[0];
        li.appendChild(kbd);
        li.appendChild(document.createTextNode(" " + k[1]));
        ul.appendChild(li);
      });
      var close = document.createElement("button");
      close.type = "button";
      close.textContent = "Close";
      close.addEventListener("click", function () { help.close(); });
      help.appendChild(h);
      help.appendChild(ul);
      help.appendChild(close);
      document.body.appendChild(help);
    }
    if (help.open) { help.close(); } else { help.showModal(); }
  }

  function click(id) {
    var el = document.getElementById(id);
    if (el) { el.click(); return true; }
    return false;
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (help && help.open) {
      if (e.key === "?") { e.preventDefault(); help.close(); }
      return;
    }
    if (typing(e)) {
      if (e.key === "Escape") { e.target.blur(); }
      return;
    }
    switch (e.key) {
    case "a":
      if (click("approve")) { e.preventDefault(); }
      break;
    case "r":
      var reason = document.getElementById("reason");
      if (!reason) { break; }
      e.preventDefault();
      if (reason.value.trim() === "") { reason.focus(); } else { click("reject"); }
      break;
    case "n":
      if (click("skip")) { e.preventDefault(); break; }
      var next = document.querySelector("#serve-next button");
      if (next) { e.preventDefault(); next.click(); }
      break;
    case "?":
      e.preventDefault();
      toggleHelp();
      break;
    }
  });

  // Reject needs a reason: say so instead of sending an empty one.
  var reject = document.getElementById("reject");
  if (reject) {
    reject.addEventListener("click", function (e) {
      var reason = document.getElementById("reason");
      if (reason && reason.value.trim() === "") {
        e.preventDefault();
        reason.setCustomValidity("Give a reason to reject.");
        reason.reportValidity();
        reason.focus();
      }
    });
    document.getElementById("reason").addEventListener("input", function () { this.setCustomValidity(""); });
  }

  // The serve's countdown.
  var expires = document.getElementById("expires");
  var out = document.getElementById("countdown");
  if (expires && out) {
    var end = Date.parse(expires.getAttribute("datetime"));
    var tick = function () {
      var left = Math.round((end - Date.now()) / 1000);
      if (left <= 0) {
        out.textContent = "— expired: a verdict now will be refused (review.serve_expired); serve again.";
        out.className = "late";
        return;
      }
      var m = Math.floor(left / 60), s = left % 60;
      out.textContent = "(" + m + ":" + (s < 10 ? "0" : "") + s + " left)";
      setTimeout(tick, 1000);
    };
    tick();
  }

  // The inbox: long-poll the same inbox endpoint agents use; when
  // something changed, fetch the lists again and swap them in, unless
  // the human is typing in them.
  var live = document.getElementById("live");
  var lists = document.getElementById("inbox-lists");
  if (live && lists) {
    var since = live.getAttribute("data-since") || "0";
    var dirty = function () {
      var fields = lists.querySelectorAll("textarea, input:not([type=hidden])");
      for (var i = 0; i < fields.length; i++) {
        if (fields[i].value !== "" || fields[i] === document.activeElement) { return true; }
      }
      return false;
    };
    var refresh = function () {
      return fetch("/inbox?part=lists", { credentials: "same-origin" }).then(function (r) {
        if (!r.ok) { throw new Error("status " + r.status); }
        return r.text();
      }).then(function (html) {
        if (dirty()) {
          live.textContent = "New items arrived: reload the page to see them (you are typing).";
          return;
        }
        lists.innerHTML = html;
        live.textContent = "Updated " + new Date().toLocaleTimeString() + ".";
      });
    };
    var poll = function () {
      fetch("/inbox/wait?since=" + encodeURIComponent(since), { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (r) {
          if (r.status === 401) {
            live.textContent = "Your session has ended: sign in again to see new items.";
            throw "signed out";
          }
          return r.json();
        })
        .then(function (d) {
          if (d.since !== undefined) { since = String(d.since); }
          return d.changed ? refresh() : null;
        })
        .then(function () { setTimeout(poll, 100); })
        .catch(function (err) { if (err !== "signed out") { setTimeout(poll, 5000); } });
    };
    poll();
  }
})();
