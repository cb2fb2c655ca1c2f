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
var run = 0;
var S = D.sampling;
$("sampling").textContent = "events of " + S.kept + " of " + S.instances + " instances kept (" +
  S.events_kept + " of " + S.events_total + " events; every violating instance, then a seeded sample, seed " +
  S.seed + ", budget " + S.max_events + " events)";
if (D.summary && D.summary.scenario) $("title").textContent = "protomesh · " + D.summary.scenario;
D.runs.forEach(function (r, i) { h("option", {value: i}, $("run"), r.label); });
$("run").onchange = function () { run = +this.value; drawMesh(); fillInstances(); drawViolations(); };
document.querySelectorAll("nav button").forEach(function (b) {
  b.onclick = function () { showTab(b.getAttribute("data-tab")); };
});
function showTab(name) {
  document.querySelectorAll("nav button").forEach(function (b) { b.className = b.getAttribute("data-tab") === name ? "on" : ""; });
  document.querySelectorAll(".tab").forEach(function (t) { t.className = "tab" + (t.id === "tab-" + name ? " on" : ""); });
}

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
  var types = {}; nodes.forEach(function (n) { types[n.type] = 1; });
  Object.keys(types).sort().forEach(function (t) { var s = h("span", {}, lg); h("i", {style: "background:" + (TYPE_COLORS[t] || "#90a4ae")}, s); s.appendChild(document.createTextNode(t)); });
  D.mesh.protocols.forEach(function (p) { var s = h("span", {}, lg); h("i", {style: "background:" + protoColor(p)}, s); s.appendChild(document.createTextNode(p + " message")); });
  var s2 = h("span", {}, lg); s2.textContent = "orange ring: translation · grey: down · link width: traffic so far";
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
function eventJSON(R, key, c) {
  var o = {}, p = key.lastIndexOf("#");
  FIELDS.forEach(function (f, i) { o[f] = c[i]; });
  o.wf = key.slice(0, p); o.inst = +key.slice(p + 1);
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
    li.onclick = function () { drawSequence(key, []); };
  });
}
["q", "f-wf", "f-status", "f-check"].forEach(function (id) { $(id).oninput = listInstances; $(id).onchange = listInstances; });
var BOXED = {approve: 1, deny: 1, error: 1, retry: 1, fallback: 1, translate: 1, drop: 1, timeout: 1, abort: 1,
  prompt: 1, reroute: 1, execute: 1, call: 1, result: 1, skip: 1, wf_start: 1, wf_end: 1, collect: 1, invoke: 1, validate: 1, list: 1};
function drawSequence(key, highlight) {
  showTab("seq");
  var R = D.runs[run], evs = R.events[key] || [], svg = $("seq"), hl = {};
  highlight.forEach(function (s) { hl[s] = 1; });
  document.querySelectorAll("#instances li").forEach(function (li) { li.classList.toggle("sel", li.getAttribute("data-key") === key); });
  svg.innerHTML = "";
  $("seq-title").textContent = R.label + " · instance " + key + " · " + evs.length + " events" + (evs.length ? "" : " (not kept in this page)");
  var caller = null, order = [], seen = {}, kinds = {};
  D.mesh.nodes.forEach(function (n) { kinds[n.id] = n.type; });
  function see(a) { if (a !== null && a !== undefined && !seen[a]) { seen[a] = 1; order.push(a); } }
  evs.forEach(function (e) { if (e[2] === "wf_start") caller = e[3]; });
  see(caller);
  evs.forEach(function (e) { if (e[2] === "hop") { see(e[8].from); see(e[8].to); } else see(e[3]); });
  var servers = order.filter(function (a) { return kinds[a] === "TOOL_SERVER"; });
  order = order.filter(function (a) { return kinds[a] !== "TOOL_SERVER"; }).concat(servers);
  var X = {}, COL = 200, LEFT = 230, ROW = 22, TOP = 40;
  order.forEach(function (a, i) { X[a] = LEFT + i * COL; });
  var rows = evs.filter(function (e) { return e[2] === "hop" || BOXED[e[2]] || hl[e[1]]; });
  var height = TOP + rows.length * ROW + 30, width = LEFT + order.length * COL;
  svg.setAttribute("height", height); svg.setAttribute("width", Math.max(width, 400));
  order.forEach(function (a) {
    el("line", {"class": "lifeline", x1: X[a], y1: TOP - 8, x2: X[a], y2: height}, svg);
    el("text", {"class": "lhead", x: X[a], y: 18}, svg, a + (kinds[a] ? " (" + kinds[a] + ")" : ""));
  });
  var nextByMsg = {};
  for (var i = evs.length - 1; i >= 0; i--) {
    var m = evs[i][8] && evs[i][8].msg;
    if (m !== undefined && m !== null) { evs[i].next = nextByMsg[m]; nextByMsg[m] = evs[i]; }
  }
  rows.forEach(function (e, r) {
    var y = TOP + r * ROW + 10, on = !!hl[e[1]], cls = on ? " hl" : "";
    if (on) el("rect", {"class": "hl-row", x: 0, y: y - 10, width: width, height: ROW}, svg);
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
    g.onmouseenter = function () { var t = $("tip"); t.style.display = "block"; t.textContent = JSON.stringify(eventJSON(R, key, e), null, 1); };
    g.onmouseleave = function () { $("tip").style.display = "none"; };
  });
  var first = svg.querySelector(".hl");
  if (first && first.scrollIntoView) first.scrollIntoView({block: "center"});
}

/* ---- Violations ---- */
function drawViolations() {
  var box = $("violations"); box.innerHTML = "";
  D.runs.forEach(function (R, ri) {
    if (!R.counterexamples.length) return;
    h("h3", {}, box, R.label);
    R.counterexamples.forEach(function (c, ci) {
      var d = h("div", {"class": "cx", "data-run": ri, "data-check": c.check, "data-seqs": c.seqs.join(","), "data-inst": c.instances.join(",")}, box);
      h("b", {}, d, c.check + " (" + c.violations + " violation" + (c.violations === 1 ? "" : "s") + " in this run; the first shown) ");
      d.appendChild(document.createTextNode(c.message + " — events " + c.seqs.join(", ")));
      d.onclick = function () { run = ri; $("run").value = ri; drawMesh(); fillInstances(); if (c.instances.length) drawSequence(c.instances[0], c.seqs); };
    });
  });
  if (!box.children.length) h("p", {}, box, "No check is violated in these runs.");
}

/* ---- Results ---- */
function drawResults() {
  var box = $("tables");
  if (!D.summary) { h("p", {}, box, "No summary.json (a single run)."); }
  else {
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
  var svg = $("cdf"), names = Object.keys(D.cdf), L = 60, B = 320, Wc = 620, Hc = 290, maxX = 0;
  names.forEach(function (n) { D.cdf[n].forEach(function (p) { maxX = Math.max(maxX, p[0]); }); });
  maxX = maxX || 1;
  function px(v) { return L + v / maxX * Wc; } function py(v) { return B - v * Hc; }
  el("line", {"class": "axis", x1: L, y1: B, x2: L + Wc, y2: B}, svg); el("line", {"class": "axis", x1: L, y1: B, x2: L, y2: B - Hc}, svg);
  for (var k = 0; k <= 4; k++) {
    el("text", {x: px(maxX * k / 4), y: B + 16, "text-anchor": "middle", "font-size": 10}, svg, (maxX * k / 4).toPrecision(3));
    el("text", {x: L - 6, y: py(k / 4) + 3, "text-anchor": "end", "font-size": 10}, svg, (k / 4).toFixed(2));
  }
  el("text", {x: L + Wc / 2, y: B + 34, "text-anchor": "middle"}, svg, "end-to-end latency, s");
  names.forEach(function (n, i) {
    var pts = D.cdf[n].map(function (p) { return px(p[0]).toFixed(1) + "," + py(p[1]).toFixed(1); }).join(" ");
    el("polyline", {"class": "cdfline", "data-router": n, points: pts, stroke: COLORS[i % COLORS.length]}, svg);
    el("text", {x: L + Wc - 100, y: B - Hc + 14 * i, fill: COLORS[i % COLORS.length]}, svg, n);
  });
  var dot = el("circle", {r: 4, fill: "#000", cx: -10, cy: -10}, svg);
  svg.onmousemove = function (ev) {
    var rect = svg.getBoundingClientRect(), x = (ev.clientX - rect.left) * 700 / rect.width, v = (x - L) / Wc * maxX, out = [];
    names.forEach(function (n) {
      var pts = D.cdf[n], best = null;
      pts.forEach(function (p) { if (p[0] <= v) best = p; });
      if (best) { out.push(n + ": " + (100 * best[1]).toFixed(1) + " % ≤ " + best[0].toPrecision(4) + " s"); dot.setAttribute("cx", px(best[0])); dot.setAttribute("cy", py(best[1])); }
    });
    $("cdf-val").textContent = out.join(" · ");
  };
}
drawMesh(); fillInstances(); drawViolations(); drawResults();
document.body.setAttribute("data-ready", "1");
})();
