import { createHash } from "node:crypto";

/**
 * The console's one stylesheet, one script and its icon, served from memory with an ETag. The pages work
 * without the script (forms post, a destructive one asks on a page of its own); with it, a
 * destructive form asks in a dialog, copy buttons copy, and live sections refresh themselves.
 */

const CSS = `
:root{--fg:#1a1a1a;--muted:#5f6368;--line:#dadce0;--bg:#fff;--soft:#f6f8f9;--accent:#00805a;--warn:#b3261e;--focus:#1a73e8}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:#0b57d0}
header.top{display:flex;gap:1.5rem;align-items:center;padding:.6rem 1.2rem;border-bottom:1px solid var(--line);background:var(--soft)}
header.top .brand{font-weight:700;color:var(--accent);text-decoration:none}
header.top nav{display:flex;gap:1rem;flex:1}
header.top form{margin:0}
main{padding:1rem 1.2rem;max-width:1200px}
h1{font-size:1.4rem;margin:.2rem 0 1rem}
h2{font-size:1.1rem;margin:1.4rem 0 .6rem}
table{border-collapse:collapse;width:100%;margin:.4rem 0 1rem}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:.85rem}
code,pre,textarea.sql{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
pre{background:var(--soft);padding:.6rem;overflow:auto;border-radius:4px}
.tag{display:inline-block;padding:0 .4rem;border-radius:3px;font-size:.75rem;font-weight:600;background:#e8eaed;margin-left:.3rem}
.state-Active{background:#ceead6;color:#0d652d}.state-Idle{background:#e8eaed;color:#3c4043}.state-Stopped{background:#fad2cf;color:#a50e0e}
.state-running,.state-scheduling{background:#fef7e0;color:#8a5300}.state-finished{background:#ceead6;color:#0d652d}.state-failed,.state-error{background:#fad2cf;color:#a50e0e}
.transition{color:var(--muted);font-size:.8rem;margin-left:.3rem}
.notice{background:#e6f4ea;border:1px solid #ceead6;padding:.6rem .8rem;border-radius:4px;margin:.6rem 0}
.error{background:#fce8e6;border:1px solid #fad2cf;padding:.6rem .8rem;border-radius:4px;margin:.6rem 0}
.warning{color:var(--warn);font-weight:600}
.secret{display:flex;gap:.5rem;align-items:center}
.secret code{background:var(--soft);padding:.3rem .5rem;border-radius:3px;word-break:break-all}
.secret details{flex-basis:100%}.secret{flex-wrap:wrap}
form.inline{display:inline;margin:0}
fieldset{border:1px solid var(--line);border-radius:4px;margin:.4rem 0 1rem;padding:.6rem .8rem}
label{display:inline-flex;flex-direction:column;gap:.15rem;margin:0 .8rem .5rem 0;font-size:.85rem;color:var(--muted)}
label.check{flex-direction:row;align-items:center;gap:.3rem}
label.wide{display:flex}
input,select,textarea{font:inherit;padding:.3rem .4rem;border:1px solid var(--line);border-radius:3px;color:var(--fg)}
textarea.sql{width:100%;min-height:8rem}
button{font:inherit;padding:.3rem .7rem;border:1px solid var(--line);border-radius:3px;background:#fff;cursor:pointer}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
button.danger{color:var(--warn)}
:focus-visible{outline:2px solid var(--focus);outline-offset:2px}
nav.tabs{display:flex;gap:.2rem;border-bottom:1px solid var(--line);margin:1rem 0}
nav.tabs a{padding:.4rem .8rem;text-decoration:none;color:var(--muted);border-bottom:2px solid transparent}
nav.tabs a[aria-current=page]{color:var(--fg);border-color:var(--accent)}
details>summary{cursor:pointer;margin:.4rem 0;font-weight:600}
.muted{color:var(--muted)}
.diff .add,[data-schema-legend] .add{background:#e6f4ea;color:#0d652d}.diff .del,[data-schema-legend] .del{background:#fce8e6;color:#a50e0e}.diff .hunk,.diff .file{color:var(--muted)}
.chart{margin:.4rem 0 1rem}
.chart svg{max-width:100%;height:auto;border:1px solid var(--line);border-radius:4px;background:#fff}
a,h1,h2,td,th,code,option,.tag{unicode-bidi:isolate}
h1,h2,td,th,p{overflow-wrap:anywhere}
input,select,textarea{max-width:100%}
table[data-result]{display:block;overflow-x:auto}
table[data-result] td{overflow-wrap:normal;white-space:pre}
@media (max-width:700px){
header.top{flex-wrap:wrap;gap:.6rem 1rem}
main{padding:.8rem}
table{display:block;overflow-x:auto}
td,th{overflow-wrap:normal;white-space:nowrap}
}
`;

const JS = `
(function(){
  document.addEventListener("submit", function(e){
    var f = e.target;
    var msg = f.getAttribute("data-confirm");
    if (!msg) return;
    if (!window.confirm(msg)) { e.preventDefault(); return; }
    var c = document.createElement("input");
    c.type = "hidden"; c.name = "confirm"; c.value = "yes"; f.appendChild(c);
  });
  // A form sent is kept by the tab until the next page: when that page says the form was refused
  // (its error notice), the form is filled again with what was typed, not emptied.
  document.addEventListener("submit", function(e){
    var f = e.target;
    if (e.defaultPrevented || (f.getAttribute("method") || "").toLowerCase() !== "post") return;
    var fields = [];
    Array.prototype.forEach.call(f.elements, function(el){
      if (!el.name || el.type === "hidden" || el.type === "submit" || el.type === "button") return;
      fields.push({ name: el.name, value: el.value, checked: el.checked });
    });
    try { sessionStorage.setItem("console-form", JSON.stringify({ action: f.getAttribute("action"), fields: fields })); } catch (err) {}
  });
  try {
    var sent = JSON.parse(sessionStorage.getItem("console-form") || "null");
    sessionStorage.removeItem("console-form");
    var again = sent && document.querySelector("main > p.error") && Array.prototype.find.call(document.forms, function(f){
      return f.getAttribute("action") === sent.action;
    });
    if (again) sent.fields.forEach(function(saved){
      Array.prototype.forEach.call(again.elements, function(el){
        if (el.name !== saved.name) return;
        if (el.type === "radio" || el.type === "checkbox") { if (el.value === saved.value) el.checked = saved.checked; }
        else el.value = saved.value;
      });
    });
  } catch (err) {}
  // Ctrl+Enter (Cmd+Enter) in the SQL editor runs the statement.
  document.addEventListener("keydown", function(e){
    if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey)) return;
    var t = e.target;
    if (!t.matches || !t.matches("textarea[name=query]") || !t.form) return;
    e.preventDefault();
    t.form.requestSubmit();
  });
  document.addEventListener("click", function(e){
    var b = e.target.closest && e.target.closest("[data-copy]");
    if (!b) return;
    var src = document.getElementById(b.getAttribute("data-copy"));
    if (!src || !navigator.clipboard) return;
    navigator.clipboard.writeText(src.textContent).then(function(){ b.textContent = "Copied"; });
  });
  // A form marked data-autosubmit is sent once one of its fields changed and no other change
  // followed for a moment (arrow keys through a select change it at each key); the page it loads
  // gives the focus back to that field.
  var autosubmit;
  document.addEventListener("change", function(e){
    var f = e.target.closest && e.target.closest("form[data-autosubmit]");
    if (!f) return;
    clearTimeout(autosubmit);
    autosubmit = setTimeout(function(){
      // The statement being written goes along, kept by the tab (never in the URL).
      var carried = document.querySelector("textarea[name=query]");
      try {
        if (carried) sessionStorage.setItem("console-statement", carried.value);
        sessionStorage.setItem("console-focus", e.target.name);
      } catch (err) {}
      f.submit();
    }, 400);
  });
  try {
    var kept = sessionStorage.getItem("console-statement");
    sessionStorage.removeItem("console-statement");
    var editor = document.querySelector("textarea[name=query]");
    if (kept !== null && editor) editor.value = kept;
    var focused = sessionStorage.getItem("console-focus");
    sessionStorage.removeItem("console-focus");
    var field = focused && document.querySelector("form[data-autosubmit] [name='" + CSS.escape(focused) + "']");
    if (field) field.focus();
  } catch (err) {}
  function refresh(el){
    if (el.getAttribute("data-live") !== "true") return;
    setTimeout(function(){
      // A session that ended answers with a redirect to the sign-in page: the section stays, and says so.
      fetch(el.getAttribute("data-refresh"), {credentials: "same-origin", redirect: "manual"}).then(function(r){
        return r.ok ? r.text() : (r.type === "opaqueredirect" || r.status === 401 ? "" : null);
      }).then(function(html){
        if (html === null) return;
        var t = document.createElement("div"); t.innerHTML = html;
        var next = t.firstElementChild;
        if (!next || next.id !== el.id) {
          var p = document.createElement("p");
          p.className = "error"; p.setAttribute("role", "alert");
          p.textContent = "Your console session ended: reload the page to sign in again.";
          el.appendChild(p);
          return;
        }
        el.replaceWith(next);
        // The operations an action started are done: the page again, as they left it.
        if (el.hasAttribute("data-reload-when-done") && next.getAttribute("data-live") !== "true") { location.reload(); return; }
        refresh(next);
      }).catch(function(){ refresh(el); });
    }, 1000);
  }
  document.querySelectorAll("[data-refresh]").forEach(refresh);
})();
`;

/** The tab's icon (the brand's colour), so browsers do not ask for a /favicon.ico that is not there. */
const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#00805a"/>' +
  '<path d="M9 23V9h3.2l7.6 9.3V9H23v14h-3.2l-7.6-9.3V23z" fill="#fff"/></svg>';

export interface Asset {
  body: string;
  type: string;
  etag: string;
}

const asset = (body: string, type: string): Asset => ({
  body,
  type,
  etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
});

/** By file name (a Map: a name such as `toString` finds nothing). */
export const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ["console.css", asset(CSS, "text/css; charset=utf-8")],
  ["console.js", asset(JS, "text/javascript; charset=utf-8")],
  ["icon.svg", asset(ICON, "image/svg+xml")],
]);
