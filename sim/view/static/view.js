/* protomesh explorer: plain JS + SVG, reads the JSON block #protomesh-data. */
(function () {
"use strict";
var D = JSON.parse(document.getElementById("protomesh-data").textContent);
var NS = "http://www.w3.org/2000/svg";
var COLORS = ["#1e88e5", "#43a047", "#e53935", "#8e24aa", "#fb8c00", "#00acc1", "#6d4c41", "#546e7a"];
var TYPE_COLORS = {LLM_AGENT: "#42a5f5", GATEWAY: "#ffca28", TOOL_SERVER: "#66bb6a", COORDINATOR: "#ab47bc", agent: "#90a4ae"};
function $(id) { return document.getElementById(id); }
function el(tag, attrs, parent, text) {
  var e = document.createElementNS(NS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function h(tag, attrs, parent, text) {
  var e = document.createElement(tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function protoColor(p) { var i = D.mesh.protocols.indexOf(p); return i < 0 ? "#999" : COLORS[i % COLORS.length]; }
/* the run shown first: the scenario's first router's first replication (else the first) */
var run = 0, chosen = false, routers = (D.summary && D.summary.routers) || D.routers || [];
if (routers.length) D.runs.forEach(function (r, i) {
  if (!chosen && r.router === routers[0] && /(^|\/)rep-0$/.test(r.label)) { run = i; chosen = true; }
});
var S = D.sampling;
$("sampling").textContent = "events of " + S.kept + " of " + S.instances + " instances kept (" +
  S.events_kept + " of " + S.events_total + " events: every instance of a listed counterexample, then a seeded sample, seed " +
  S.seed + ", budget " + S.max_events + " events)";
if (D.summary && D.summary.scenario) $("title").textContent = "protomesh · " + D.summary.scenario;
D.runs.forEach(function (r, i) { h("option", {value: i}, $("run"), r.label); });
$("run").value = String(run);
$("run").onchange = function () { run = +this.value; drawMesh(); fillInstances(); drawViolations(); drawTimeline(); };
document.querySelectorAll("nav button").forEach(function (b) {
  b.onclick = function () { showTab(b.getAttribute("data-tab")); };
});
function showTab(name) {
  document.querySelectorAll("nav button").forEach(function (b) { b.className = b.getAttribute("data-tab") === name ? "on" : ""; });
  document.querySelectorAll(".tab").forEach(function (t) { t.className = "tab" + (t.id === "tab-" + name ? " on" : ""); });
}
/* with a summary the page opens on the verdict, else (one run) the verdict tab is hidden */
if (D.summary && D.summary.verdict) showTab("verdict"); else $("verdict-tab").style.display = "none";

/* ---- Mesh ---- */
var W = 900, H = 520, PAD = 80, frame = 0, timer = null, cum = null;
function nx(n) { return PAD + n.x * (W - 2 * PAD); }
function ny(n) { return PAD + (1 - n.y) * (H - 2 * PAD); }
function drawMesh() {
  var svg = $("mesh"); svg.innerHTML = "";
  var R = D.runs[run], nodes = D.mesh.nodes, links = D.mesh.links;
  var total = links.map(function () { return 0; });
  cum = [];
  var byFrame = [];
  for (var f = 0; f < D.frames; f++) byFrame.push([]);
  R.hops.forEach(function (x) { byFrame[x[0]].push(x); total[x[1]] += x[3]; });
  var acc = links.map(function () { return 0; });
  for (f = 0; f < D.frames; f++) { byFrame[f].forEach(function (x) { acc[x[1]] += x[3]; }); cum.push(acc.slice()); }
  var maxTotal = Math.max.apply(null, total.concat([1]));
  var gl = el("g", {}, svg), gd = el("g", {}, svg), gn = el("g", {}, svg);
  links.forEach(function (l, i) {
    var a = nodes[l.a], b = nodes[l.b];
    el("line", {"class": "link", "data-link": i, x1: nx(a), y1: ny(a), x2: nx(b), y2: ny(b), "stroke-width": 2}, gl)
      .appendChild(el("title", {}, null, a.id + " — " + b.id + " (" + l.protocols.join(", ") + ")" + (l.members > 1 ? ", " + l.members + " links" : "")));
  });
  var most = Math.max.apply(null, nodes.map(function (n) { return n.members; }).concat([1]));
  nodes.forEach(function (n, i) {
    var r = D.mesh.aggregated ? 10 + 40 * Math.sqrt(n.members / most) : 16;
    var c = el("circle", {"class": "node", "data-node": i, cx: nx(n), cy: ny(n), r: r, fill: TYPE_COLORS[n.type] || "#90a4ae"}, gn);
    c.appendChild(el("title", {}, null, n.id + " (" + n.type + (n.members > 1 ? ", " + n.members + " agents" : "") + ")"));
    el("text", {"class": "nlabel", x: nx(n), y: ny(n) + r + 13}, gn, D.mesh.aggregated ? n.id + " ×" + n.members : n.id);
  });
  var lg = $("legend"); lg.innerHTML = "";
  function entry(key, swatch, text) {
    var s = h("span", {"data-legend": key}, lg), i = h("i", {}, s);
    i.setAttribute("style", swatch); s.appendChild(document.createTextNode(text));
  }
  var types = {}; nodes.forEach(function (n) { types[n.type] = 1; });
  Object.keys(types).sort().forEach(function (t) { entry("type:" + t, "background:" + (TYPE_COLORS[t] || "#90a4ae"), t); });
  D.mesh.protocols.forEach(function (p) { entry("message:" + p, "background:" + protoColor(p), p + " message"); });
  entry("translation", "background:#fff;border:3px solid #ff6f00", "orange ring: a translation at the node");
  entry("drop", "background:none;color:#c62828", "✕ red cross: a drop at the node");
  entry("down", "background:#ccc", "grey node, dashed link: down");
  entry("width", "background:#90a4ae;height:4px;border-radius:0", "link width: traffic so far");
  if (R.flows.length) entry("arc", "background:none;border-top:2px dashed #555;border-radius:0;height:0", "dashed arc: an invocation from caller to the server it names (route not recorded)");
  if (R.level === "protocol") h("span", {"class": "level"}, lg, "protocol-level trace: no send/hop/deliver events, so no per-link traffic or paths");
  else if (R.level === "full" && !R.hops.length) h("span", {"class": "level"}, lg, "full-level trace in which no message moved (no hop in this run)");
  if (D.mesh.aggregated) h("span", {}, lg, "aggregated by agent type (" + D.mesh.agents + " agents, " + D.mesh.link_count + " links)");
  mesh = {byFrame: byFrame, maxTotal: maxTotal, dots: gd};
  $("slider").max = D.frames - 1;
  setFrame(frame);
}
var mesh = null;
function setFrame(f) {
  frame = f; $("slider").value = f;
  var R = D.runs[run], dur = R.duration, t0 = f * dur / D.frames, t1 = (f + 1) * dur / D.frames;
  $("clock").textContent = "t = " + t0.toFixed(1) + "–" + t1.toFixed(1) + " s of " + dur.toFixed(0) + " s";
  var linksEl = $("mesh").querySelectorAll(".link"), nodesEl = $("mesh").querySelectorAll(".node");
  var downN = {}, downL = {};
  R.down.forEach(function (d) { if (d[2] < t1 && d[3] > t0) (d[0] === "node" ? downN : downL)[d[1]] = 1; });
  nodesEl.forEach(function (c, i) {
    var n = D.mesh.nodes[i];
    c.classList.toggle("down", !!downN[n.id]);
    c.classList.remove("flash");
  });
  linksEl.forEach(function (l, i) {
    var lk = D.mesh.links[i], key = [D.mesh.nodes[lk.a].id, D.mesh.nodes[lk.b].id].sort().join("|");
    l.classList.toggle("down", !!downL[key] || !!downN[D.mesh.nodes[lk.a].id] || !!downN[D.mesh.nodes[lk.b].id]);
    l.setAttribute("stroke-width", (1.5 + 10 * Math.sqrt(cum[f][i] / mesh.maxTotal)).toFixed(2));
  });
  R.translations.forEach(function (x) { if (x[0] === f) nodesEl[x[1]].classList.add("flash"); });
  mesh.dots.innerHTML = "";
  R.flows.forEach(function (x) {
    if (x[0] !== f) return;
    var a = D.mesh.nodes[x[1]], b = D.mesh.nodes[x[2]], mx = (nx(a) + nx(b)) / 2, my = (ny(a) + ny(b)) / 2;
    var dx = nx(b) - nx(a), dy = ny(b) - ny(a), len = Math.sqrt(dx * dx + dy * dy) || 1, bend = 0.18 * len;
    var fl = el("path", {"class": "flow", "data-from": a.id, "data-to": b.id, "stroke-width": Math.min(6, 1 + Math.sqrt(x[4])).toFixed(2),
      d: "M" + nx(a) + "," + ny(a) + " Q" + (mx - dy / len * bend) + "," + (my + dx / len * bend) + " " + nx(b) + "," + ny(b),
      stroke: protoColor(D.mesh.protocols[x[3]])}, mesh.dots);
    fl.appendChild(el("title", {}, null, x[4] + " invocation(s) " + a.id + " → " + b.id + " in " + (D.mesh.protocols[x[3]] || "?")));
  });
  R.drops.forEach(function (x) {
    if (x[0] !== f) return;
    var n = D.mesh.nodes[x[1]], c = el("text", {"class": "dropmark", x: nx(n) + 14, y: ny(n) - 12}, mesh.dots, "✕" + (x[2] > 1 ? x[2] : ""));
    c.appendChild(el("title", {}, null, x[2] + " drop(s) at " + n.id));
  });
  var nP = Math.max(1, D.mesh.protocols.length);
  mesh.byFrame[f].forEach(function (x) {
    var lk = D.mesh.links[x[1]], a = D.mesh.nodes[lk.a], b = D.mesh.nodes[lk.b];
    var k = Math.min(6, x[3]);
    for (var j = 0; j < k; j++) {
      var u = (j + 0.5) / k, off = (x[2] + 0.5) / nP - 0.5;
      var dx = nx(b) - nx(a), dy = ny(b) - ny(a), len = Math.sqrt(dx * dx + dy * dy) || 1;
      el("circle", {"class": "msg", r: 3.5, fill: protoColor(D.mesh.protocols[x[2]]),
        cx: nx(a) + u * dx - dy / len * off * 14, cy: ny(a) + u * dy + dx / len * off * 14}, mesh.dots);
    }
  });
}
$("slider").oninput = function () { setFrame(+this.value); };
$("play").onclick = function () {
  if (timer) { clearInterval(timer); timer = null; this.textContent = "▶ play"; return; }
  this.textContent = "❚❚ pause";
  timer = setInterval(function () { setFrame((frame + 1) % D.frames); }, 120);
};

/* ---- Instances and the sequence chart ---- */
var FIELDS = ["t", "seq", "label", "agent", "task", "inv", "tool", "proto", "detail"];
function eventJSON(key, c) {
  var o = {};
  FIELDS.forEach(function (f, i) { o[f] = c[i]; });
  if (c.length > 9) { o.wf = c[9]; o.inst = c[10]; }
  else { var p = key.lastIndexOf("#"); o.wf = key.slice(0, p); o.inst = +key.slice(p + 1); }
  return o;
}
function fillInstances() {
  var R = D.runs[run], wfs = {}, sts = {}, cks = {};
  R.instances.forEach(function (x) { wfs[x[0]] = 1; sts[x[2]] = 1; x[5].forEach(function (c) { cks[c] = 1; }); });
  [["f-wf", wfs], ["f-status", sts], ["f-check", cks]].forEach(function (p) {
    var s = $(p[0]); while (s.options.length > 1) s.remove(1);
    Object.keys(p[1]).sort().forEach(function (k) { h("option", {value: k}, s, k); });
  });
  listInstances();
}
function listInstances() {
  var R = D.runs[run], ul = $("instances"), q = $("q").value.toLowerCase();
  var fw = $("f-wf").value, fs = $("f-status").value, fc = $("f-check").value, shown = 0;
  ul.innerHTML = "";
  R.instances.forEach(function (x) {
    var key = x[0] + "#" + x[1];
    if (!x[6] || (fw && x[0] !== fw) || (fs && x[2] !== fs) || (fc && x[5].indexOf(fc) < 0)) return;
    var text = key + " · " + x[2] + " · " + x[4] + " hops" + (x[5].length ? " · ✗ " + x[5].join(",") : "");
    if (q && text.toLowerCase().indexOf(q) < 0) return;
    if (shown++ > 2000) return;
    var li = h("li", {"data-key": key, "class": x[5].length ? "bad" : ""}, ul, text);
    li.onclick = function () { drawSequence(key, [], []); };
  });
}
["q", "f-wf", "f-status", "f-check"].forEach(function (id) { $(id).oninput = listInstances; $(id).onchange = listInstances; });
var BOXED = {approve: 1, deny: 1, error: 1, retry: 1, fallback: 1, translate: 1, drop: 1, timeout: 1, abort: 1,
  prompt: 1, reroute: 1, execute: 1, call: 1, result: 1, skip: 1, wf_start: 1, wf_end: 1, collect: 1, invoke: 1, validate: 1, list: 1};
function drawSequence(key, highlight, context) {
  var R = D.runs[run], evs = R.events[key] || [];
  document.querySelectorAll("#instances li").forEach(function (li) { li.classList.toggle("sel", li.getAttribute("data-key") === key); });
  drawChart(R.label + " · instance " + key + " · " + evs.length + " events" + (evs.length ? "" : " (not kept in this page)"), key, evs, highlight, context);
}
function drawChart(title, key, evs, highlight, context) {
  showTab("seq");
  var svg = $("seq"), hl = {}, cx = {};
  highlight.forEach(function (s) { hl[s] = 1; });
  (context || []).forEach(function (s) { cx[s] = 1; });
  svg.innerHTML = "";
  $("seq-title").textContent = title;
  var caller = null, order = [], seen = {}, kinds = {};
  D.mesh.nodes.forEach(function (n) { kinds[n.id] = n.type; });
  function see(a) { if (a !== null && a !== undefined && !seen[a]) { seen[a] = 1; order.push(a); } }
  evs.forEach(function (e) { if (e[2] === "wf_start") caller = e[3]; });
  see(caller);
  evs.forEach(function (e) { if (e[2] === "hop") { see(e[8].from); see(e[8].to); } else see(e[3]); });
  var servers = order.filter(function (a) { return kinds[a] === "TOOL_SERVER"; });
  order = order.filter(function (a) { return kinds[a] !== "TOOL_SERVER"; }).concat(servers);
  var X = {}, COL = 200, LEFT = 230, ROW = 22, TOP = 16;
  order.forEach(function (a, i) { X[a] = LEFT + i * COL; });
  var rows = evs.filter(function (e) { return e[2] === "hop" || BOXED[e[2]] || hl[e[1]] || cx[e[1]]; });
  var height = TOP + rows.length * ROW + 30, width = LEFT + order.length * COL;
  svg.setAttribute("height", height); svg.setAttribute("width", Math.max(width, 400));
  var head = $("seq-head"); head.innerHTML = "";  /* sticky above the chart (view.css) */
  head.setAttribute("width", Math.max(width, 400));
  order.forEach(function (a) {
    el("line", {"class": "lifeline", x1: X[a], y1: 0, x2: X[a], y2: height}, svg);
    el("text", {"class": "lhead", x: X[a], y: 18}, head, a + (kinds[a] ? " (" + kinds[a] + ")" : ""));
  });
  var nextByMsg = {};
  for (var i = evs.length - 1; i >= 0; i--) {
    var m = evs[i][8] && evs[i][8].msg;
    if (m !== undefined && m !== null) { evs[i].next = nextByMsg[m]; nextByMsg[m] = evs[i]; }
  }
  rows.forEach(function (e, r) {
    var y = TOP + r * ROW + 10, on = !!hl[e[1]], cls = on ? " hl" : (cx[e[1]] ? " ctx" : "");
    if (on || cx[e[1]]) el("rect", {"class": on ? "hl-row" : "ctx-row", x: 0, y: y - 10, width: width, height: ROW}, svg);
    el("text", {"class": "tlabel", x: 4, y: y + 3}, svg, e[0].toFixed(3) + " #" + e[1]);
    var g;
    if (e[2] === "hop") {
      var x1 = X[e[8].from], x2 = X[e[8].to], proto = e[8].proto || e[7];
      var lat = e.next ? " " + ((e.next[0] - e[0]) * 1000).toFixed(1) + " ms" : "";
      g = el("g", {"class": "arrow-g" + cls, "data-seq": e[1]}, svg);
      el("path", {"class": "arrow" + cls, "data-seq": e[1], d: "M" + x1 + "," + y + " L" + x2 + "," + y +
        " M" + (x2 - (x2 > x1 ? 7 : -7)) + "," + (y - 4) + " L" + x2 + "," + y + " L" + (x2 - (x2 > x1 ? 7 : -7)) + "," + (y + 4),
        stroke: protoColor(proto)}, g);
      el("text", {"class": "alabel", x: (x1 + x2) / 2, y: y - 3, "text-anchor": "middle"}, g, proto + lat);
    } else {
      var x = X[e[3]] !== undefined ? X[e[3]] : LEFT, d = e[8] || {};
      var text = e[2] === "translate" ? "translate " + d.from_proto + "→" + d.to_proto + (d.dropped && d.dropped.length ? " (−" + d.dropped.length + " fields)" : "")
        : e[2] + (d.error ? " " + d.error : "") + (d.status ? " " + d.status : "") + (d.reason && e[2] !== "approve" ? " " + d.reason : "") + (e[6] && e[2] !== "wf_start" && e[2] !== "wf_end" ? " " + e[6] : "");
      g = el("g", {"class": "box " + e[2] + cls, "data-seq": e[1], "data-label": e[2]}, svg);
      var w = Math.max(60, text.length * 5.6 + 10);
      el("rect", {x: x - w / 2, y: y - 8, width: w, height: 16, rx: 3}, g);
      el("text", {x: x, y: y + 4, "text-anchor": "middle"}, g, text);
    }
    g.onmouseenter = function () { var t = $("tip"); t.style.display = "block"; t.textContent = JSON.stringify(eventJSON(key, e), null, 1); };
    g.onmouseleave = function () { $("tip").style.display = "none"; };
  });
  var first = svg.querySelector(".hl");
  if (first && first.scrollIntoView) first.scrollIntoView({block: "center"});
}

/* ---- Violations: each violated check and property, its kept counterexamples ---- */
function plural(n, w) { return n + " " + w + (n === 1 ? "" : "s"); }
function openExample(ri, g, ex) {
  if (ri !== null) { run = ri; $("run").value = ri; drawMesh(); fillInstances(); drawTimeline(); }
  var where = ri === null ? "verify " + g.workflow + "/" + g.router : D.runs[ri].label;
  if (ex.events) drawChart(where + " · " + g.kind + " " + g.name + " · " + ex.message, null, ex.events, ex.seqs, ex.context);
  else if (ex.instances.length) drawSequence(ex.instances[0], ex.seqs, ex.context);
}
function drawGroup(box, g, ri) {
  var grp = h("div", {"class": "group", "data-run": ri === null ? "" : ri, "data-kind": g.kind, "data-name": g.name, "data-violations": g.violations, "data-kept": g.examples.length}, box);
  var head = h("div", {"class": "ghead"}, grp), more = g.violations - g.examples.length;
  h("b", {}, head, g.kind === "verify" ? "property " + g.name + " · workflow " + g.workflow + " · router " + g.router : g.kind + " " + g.name);
  head.appendChild(document.createTextNode(g.kind === "verify" ? " — violated in the untimed model (" + g.path + ")" :
    (g.formula ? " (" + g.scope + " scope: " + g.formula + ")" : "") + " — " + plural(g.violations, "violation") + " in this run, " + g.examples.length + " kept" +
    (more > 0 ? ": the earliest by seq; " + more + " more not kept (cap " + D.keep_counterexamples + " per run)" : "")));
  if (!g.examples.length) return;
  var table = h("table", {"class": "viol sortable"}, grp), tr = h("tr", {}, h("thead", {}, table));
  ["#", "first event", "message", "events", "instances"].forEach(function (c) { h("th", {}, tr, c); });
  var body = h("tbody", {}, table);
  g.examples.forEach(function (ex, xi) {
    var d = h("tr", {"class": "cx", "data-run": ri === null ? "" : ri, "data-kind": g.kind, "data-check": g.name, "data-seqs": ex.seqs.join(","),
      "data-context": ex.context.join(","), "data-inst": ex.instances.join(","), title: "open the counterexample"}, body);
    h("td", {}, d, String(xi + 1));
    h("td", {}, d, ex.seqs.length ? String(Math.min.apply(null, ex.seqs)) : "–");
    h("td", {style: "text-align:left"}, d, ex.message);
    h("td", {style: "text-align:left"}, d, (ex.seqs.length ? ex.seqs.join(", ") : "no single offending event") + (ex.elided ? " (" + ex.elided + " events of the scope left out)" : ""));
    h("td", {style: "text-align:left"}, d, ex.instances.join(", "));
    d.onclick = function () { openExample(ri, g, ex); };
  });
  sortable(table);
}
/* a click on a header sorts the rows by that column (numbers as numbers), again: reversed */
function sortable(table) {
  table.querySelectorAll("thead th").forEach(function (th, col) {
    th.onclick = function (ev) {
      ev.stopPropagation();
      var body = table.querySelector("tbody"), rows = Array.prototype.slice.call(body.rows);
      var down = th.getAttribute("data-sort") === "up";
      table.querySelectorAll("thead th").forEach(function (o) { o.removeAttribute("data-sort"); });
      th.setAttribute("data-sort", down ? "down" : "up");
      function key(r) { var t = r.cells[col].textContent, n = parseFloat(t); return isNaN(n) ? t : n; }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
        return down ? -c : c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    };
  });
}
/* the Violations tab's first table: one row per violated check or property of each run */
function violationSummary(box) {
  var rows = [];
  D.runs.forEach(function (R, ri) { R.violated.forEach(function (g) { rows.push([R.label, g, ri]); }); });
  D.verify.forEach(function (g) { rows.push(["verify " + g.workflow + "/" + g.router, g, null]); });
  if (!rows.length) return;
  var table = h("table", {"class": "viol-summary sortable"}, box), tr = h("tr", {}, h("thead", {}, table));
  ["run", "kind", "name", "violations", "kept"].forEach(function (c) { h("th", {}, tr, c); });
  var body = h("tbody", {}, table);
  rows.forEach(function (x) {
    var g = x[1], r = h("tr", {"class": "vrow", "data-run": x[2] === null ? "" : x[2], "data-name": g.name, title: "open the first counterexample"}, body);
    [x[0], g.kind, g.name, String(g.violations), String(g.examples.length)].forEach(function (c, i) { h("td", {style: i < 3 ? "text-align:left" : ""}, r, c); });
    r.onclick = function () { if (g.examples.length) openExample(x[2], g, g.examples[0]); };
  });
  sortable(table);
}
function drawViolations() {
  var box = $("violations"); box.innerHTML = "";
  violationSummary(box);
  D.runs.forEach(function (R, ri) {
    if (!R.violated.length) return;
    h("h3", {}, box, R.label);
    R.violated.forEach(function (g) { drawGroup(box, g, ri); });
  });
  if (D.verify.length) {
    h("h3", {}, box, "verify: every execution of the untimed model (shortest counterexamples)");
    D.verify.forEach(function (g) { drawGroup(box, g, null); });
  }
  if (!box.children.length) h("p", {}, box, "No check or property is violated in these runs.");
}

/* ---- Results: tables, and two interactive charts (drag across to zoom, mouse wheel to
   zoom around the pointer, double-click or "reset zoom" to see everything, hover for the
   values under the pointer) ---- */
function Chart(svg, o) {
  var W = o.W, H = o.H, L = 64, T = 14, Wp = W - L - 16, Hp = H - T - 46;
  var full = [o.xmin, o.xmax > o.xmin ? o.xmax : o.xmin + 1], dom = full.slice(), ymax = 1, drag = null;
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  function px(x) { return L + (x - dom[0]) / (dom[1] - dom[0]) * Wp; }
  function cx(x) { return Math.max(L, Math.min(L + Wp, px(x))).toFixed(1); } /* clamped: the plots are steps */
  function py(y) { return T + Hp - y / ymax * Hp; }
  function data(ev) {
    var m = svg.getScreenCTM(), x = (ev.clientX - m.e) / m.a;
    return dom[0] + (x - L) / Wp * (dom[1] - dom[0]);
  }
  /* 4 to 10 ticks at round values (1, 2 or 5 × 10^k apart) within [a, b] */
  function ticks(a, b) {
    var span = b - a, step = Math.pow(10, Math.floor(Math.log10(span / 5)));
    [1, 2, 5, 10].some(function (k) { if (span / (k * step) <= 10) { step *= k; return true; } return false; });
    var out = [], first = Math.ceil(a / step - 1e-9) * step;
    for (var v = first; v <= b + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : +v.toPrecision(12));
    return out;
  }
  function nice(v) { var p = Math.pow(10, Math.floor(Math.log10(v))); return [1, 2, 5, 10].map(function (k) { return k * p; }).filter(function (c) { return c >= v; })[0]; }
  var cross, brush, dots = [];
  function draw() {
    svg.innerHTML = ""; dots = [];
    svg.setAttribute("data-x0", dom[0].toPrecision(6)); svg.setAttribute("data-x1", dom[1].toPrecision(6));
    if (o.ymax) ymax = o.ymax;
    else {
      var top = 0;
      o.series.forEach(function (s) { s.points.forEach(function (p, i) { var x1 = o.step === "bin" ? p[0] + o.width : p[0]; if (x1 >= dom[0] && p[0] <= dom[1]) top = Math.max(top, p[1]); }); });
      ymax = nice(Math.max(1, top));
    }
    var plot = el("g", {}, svg);
    (o.bands || []).forEach(function (b) {
      if (b.x1 < dom[0] || b.x0 > dom[1]) return;
      var r = el("rect", {"class": "band", "data-label": b.label, x: cx(b.x0), y: T, width: Math.max(1, cx(b.x1) - cx(b.x0)), height: Hp, fill: b.color}, plot);
      r.appendChild(el("title", {}, null, b.label + ": " + o.fmtX(b.x0) + " – " + o.fmtX(b.x1)));
    });
    el("line", {"class": "axis", x1: L, y1: T + Hp, x2: L + Wp, y2: T + Hp}, svg);
    el("line", {"class": "axis", x1: L, y1: T, x2: L, y2: T + Hp}, svg);
    ticks(dom[0], dom[1]).forEach(function (xv) {
      el("text", {"class": "tick xtick", x: px(xv), y: T + Hp + 14, "text-anchor": "middle"}, svg, +xv.toPrecision(6));
    });
    ticks(0, ymax).forEach(function (yv) {
      el("text", {"class": "tick ytick", x: L - 5, y: py(yv) + 3, "text-anchor": "end"}, svg, +yv.toPrecision(6));
      el("line", {"class": "grid", x1: L, y1: py(yv), x2: L + Wp, y2: py(yv)}, svg);
    });
    el("text", {x: L + Wp / 2, y: H - 8, "text-anchor": "middle"}, svg, o.xlabel);
    el("text", {x: 12, y: T + Hp / 2, "text-anchor": "middle", transform: "rotate(-90 12 " + (T + Hp / 2) + ")"}, svg, o.ylabel);
    o.series.forEach(function (s, i) {
      var pts = [];
      s.points.forEach(function (p, j) {
        if (o.step === "bin") { pts.push(cx(p[0]) + "," + py(p[1]).toFixed(1), cx(p[0] + o.width) + "," + py(p[1]).toFixed(1)); }
        else { if (j) pts.push(cx(p[0]) + "," + py(s.points[j - 1][1]).toFixed(1)); pts.push(cx(p[0]) + "," + py(p[1]).toFixed(1)); }
      });
      var attrs = {"class": "series " + (o.cls || ""), "data-name": s.name, points: pts.join(" "), stroke: s.color};
      if (o.cls) attrs["data-router"] = s.name;
      if (s.dash) attrs["stroke-dasharray"] = "4 3";
      el("polyline", attrs, plot);
      var ly = T + 12 + 13 * i, key = el("g", {"class": "chartlegend", "data-legend": s.name}, svg);
      el("text", {x: L + Wp - 30, y: ly, "text-anchor": "end", fill: s.color, "font-size": 11}, key, s.name);
      el("line", {x1: L + Wp - 26, y1: ly - 4, x2: L + Wp - 6, y2: ly - 4, stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash ? "4 3" : "none"}, key);
      dots.push(el("circle", {r: 3.5, fill: s.color, cx: -20, cy: -20}, svg));
    });
    (o.bandKinds || []).forEach(function (b, i) {  /* what the shaded bands are */
      var ly = T + 12 + 13 * (o.series.length + i), key = el("g", {"class": "chartlegend", "data-legend": b.label}, svg);
      el("text", {x: L + Wp - 30, y: ly, "text-anchor": "end", "font-size": 11}, key, b.label + " (band)");
      el("rect", {x: L + Wp - 26, y: ly - 9, width: 20, height: 10, fill: b.color, opacity: 0.35}, key);
    });
    cross = el("line", {"class": "cross", x1: -5, x2: -5, y1: T, y2: T + Hp}, svg);
    brush = el("rect", {"class": "brush", x: -5, y: T, width: 0, height: Hp}, svg);
  }
  function hover(x) {
    if (x < dom[0] || x > dom[1]) return;
    cross.setAttribute("x1", px(x)); cross.setAttribute("x2", px(x));
    o.series.forEach(function (s, i) {
      var p = o.at(s, x);
      if (p) { dots[i].setAttribute("cx", px(p[0] + (o.step === "bin" ? o.width / 2 : 0))); dots[i].setAttribute("cy", py(p[1])); }
    });
    o.readout.textContent = o.describe(x);
  }
  function zoom(a, b) {
    a = Math.max(full[0], a); b = Math.min(full[1], b);
    if (b - a > (full[1] - full[0]) * 1e-4) { dom = [a, b]; draw(); }
  }
  svg.onmousedown = function (ev) { drag = data(ev); ev.preventDefault(); };
  svg.onmousemove = function (ev) {
    var x = data(ev);
    if (drag !== null) { brush.setAttribute("x", px(Math.min(drag, x))); brush.setAttribute("width", Math.abs(px(x) - px(drag))); }
    hover(x);
  };
  svg.onmouseup = function (ev) {
    var x = data(ev), a = drag; drag = null;
    if (a !== null && Math.abs(px(x) - px(a)) > 4) zoom(Math.min(a, x), Math.max(a, x)); else brush.setAttribute("width", 0);
  };
  svg.onmouseleave = function () { drag = null; if (brush) brush.setAttribute("width", 0); };
  svg.ondblclick = function () { dom = full.slice(); draw(); };
  svg.onwheel = function (ev) {
    ev.preventDefault();
    var x = data(ev), f = ev.deltaY > 0 ? 1.25 : 0.8;
    zoom(x - (x - dom[0]) * f, x + (dom[1] - x) * f);
  };
  draw();
  return {reset: function () { dom = full.slice(); draw(); }, zoom: zoom};
}
function drawTables() {
  var box = $("tables");
  if (!D.summary) { h("p", {}, box, "No summary.json (a single run)."); return; }
  (D.summary.results || []).forEach(function (res) {
    h("h3", {}, box, res.router + (res.point && res.point.id ? " · " + res.point.id : "") + " (" + res.replications_ok + " replications)");
    var t = h("table", {}, box), hr = h("tr", {}, t);
    ["metric", "mean", "95 % CI"].forEach(function (c) { h("th", {}, hr, c); });
    Object.keys(res.metrics).sort().forEach(function (k) {
      var m = res.metrics[k], tr = h("tr", {}, t);
      h("td", {style: "text-align:left"}, tr, k);
      h("td", {}, tr, m.mean === null ? "-" : (+m.mean).toPrecision(4));
      h("td", {}, tr, m.ci_low === null || m.ci_low === undefined ? "-" : (+m.ci_low).toPrecision(3) + " – " + (+m.ci_high).toPrecision(3));
    });
  });
}
var charts = {};
function drawCdf() {
  var names = Object.keys(D.cdf), maxX = 0;
  names.forEach(function (n) { D.cdf[n].forEach(function (p) { maxX = Math.max(maxX, p[0]); }); });
  function at(s, x) { var best = null; s.points.forEach(function (p) { if (p[0] <= x) best = p; }); return best; }
  charts.cdf = Chart($("cdf"), {W: 700, H: 360, xmin: 0, xmax: maxX || 1, ymax: 1, step: "cdf", cls: "cdfline",
    xlabel: "end-to-end latency, s (succeeded instances, all replications)", ylabel: "fraction ≤ latency",
    series: names.map(function (n, i) { return {name: n, color: COLORS[i % COLORS.length], points: D.cdf[n]}; }),
    fmtX: function (x) { return x.toPrecision(4) + " s"; }, at: at, readout: $("cdf-val"),
    describe: function (x) {
      var out = [];
      names.forEach(function (n) { var p = at({points: D.cdf[n]}, x); out.push(n + ": " + (p ? (100 * p[1]).toFixed(1) : "0.0") + " % ≤ " + (p ? p[0] : x).toPrecision(4) + " s"); });
      return out.join(" · ");
    }});
}
function drawTimeline() {
  var R = D.runs[run], rep = R.label.split("/").pop(), same = D.runs.filter(function (r) { return r.label.split("/").pop() === rep; });
  var w = R.timeline.bin / 60, series = [], maxX = R.duration / 60;
  same.forEach(function (r, i) {
    var name = r.router || r.label;
    ["succeeded", "failed"].forEach(function (st) {
      var counts = r.timeline.ended[st] || [];
      if (!counts.length && st === "failed") return;
      series.push({name: name + " " + st, color: COLORS[i % COLORS.length], dash: st === "failed",
        points: counts.map(function (n, b) { return [b * w, n]; })});
    });
  });
  var bands = R.down.map(function (d) { return {label: d[0] + " " + d[1] + " down", x0: d[2] / 60, x1: d[3] / 60, color: d[0] === "node" ? "#9e9e9e" : "#ffb74d"}; });
  function at(s, x) { var b = Math.floor(x / w); return s.points[b] || null; }
  $("timeline-title").textContent = "Instances ended per " + (w === 1 ? "minute" : w + " minutes") + " and outages (" + rep + " of each router; outages of " + R.label + ")";
  charts.timeline = Chart($("timeline"), {W: 900, H: 320, xmin: 0, xmax: maxX, step: "bin", width: w, cls: "",
    xlabel: "simulated time, min", ylabel: "instances ended per bin", series: series, bands: bands,
    bandKinds: [{label: "node down", color: "#9e9e9e"}, {label: "link down", color: "#ffb74d"}].filter(function (k) {
      return R.down.some(function (d) { return d[0] + " down" === k.label; }); }),
    fmtX: function (x) { return x.toFixed(2) + " min"; }, at: at, readout: $("timeline-val"),
    describe: function (x) {
      var b = Math.floor(x / w), out = ["t " + (b * w).toFixed(1) + "–" + ((b + 1) * w).toFixed(1) + " min"];
      series.forEach(function (s) { var p = s.points[b]; out.push(s.name + ": " + (p ? p[1] : 0)); });
      var down = bands.filter(function (d) { return d.x0 <= x && x < d.x1; }).map(function (d) { return d.label; });
      out.push(down.length ? down.join(", ") : "nothing down");
      return out.join(" · ");
    }});
}
function drawResults() { drawTables(); drawCdf(); drawTimeline(); }
$("cdf-reset").onclick = function () { charts.cdf.reset(); };
$("timeline-reset").onclick = function () { charts.timeline.reset(); };

drawMesh(); fillInstances(); drawViolations(); drawResults();
document.body.setAttribute("data-ready", "1");
})();
