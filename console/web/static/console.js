// rmsd console: keeps a page live. The server sends "changed" when
// something the page shows changed; the page's live part is then fetched
// again (rendered by the server, escaped there) and swapped in, one fetch
// at a time. "reload" means the stream fell behind: reload the page.
(function () {
  "use strict";
  var main = document.getElementById("live");
  var status = document.getElementById("live-status");
  var src = main && main.getAttribute("data-events");
  if (!src || !window.EventSource || !window.fetch) {
    return;
  }
  var busy = false;
  var again = false;
  var count = 0;
  function say(text, cls) {
    status.textContent = text;
    status.className = "live-status " + cls;
  }
  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    again = false;
    var url = new URL(window.location.href);
    url.searchParams.set("fragment", "1");
    fetch(url.toString(), { credentials: "same-origin", cache: "no-store" })
      .then(function (res) {
        if (!res.ok) {
          throw new Error("HTTP " + res.status);
        }
        return res.text();
      })
      .then(function (html) {
        // Keep open <details> open across the swap.
        var open = {};
        main.querySelectorAll("details[open]").forEach(function (d) {
          var row = d.closest("[id]");
          if (row) { open[row.id] = true; }
        });
        main.innerHTML = html;
        Object.keys(open).forEach(function (id) {
          var row = document.getElementById(id);
          var d = row && row.querySelector("details");
          if (d) { d.open = true; }
        });
        count += 1;
        main.setAttribute("data-refreshed", String(count));
      })
      .catch(function (err) {
        say("update failed: " + err.message, "error");
      })
      .finally(function () {
        busy = false;
        if (again) {
          refresh();
        }
      });
  }
  var events = new EventSource(src);
  events.addEventListener("open", function () { say("live", "ok"); });
  events.addEventListener("error", function () { say("reconnecting…", "warn"); });
  events.addEventListener("changed", refresh);
  events.addEventListener("reload", function () {
    events.close();
    say("fell behind: reloading", "warn");
    window.location.reload();
  });
})();
