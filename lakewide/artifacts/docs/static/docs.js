/* lakewide docs: one page, no dependencies, works from file://.
 * Data: the manifest and catalog documents embedded in index.html.
 * Routes: #model/<name>, #source/<source>.<table>, # (overview). */
"use strict";
(function () {
  var manifest = JSON.parse(document.getElementById("lw-manifest").textContent);
  var catalog = JSON.parse(document.getElementById("lw-catalog").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var COLORS = { source: "#1f9d6b", primary_key: "#6a4fd6", table: "#d9822b", view: "#7a8699" };
  var KIND_NAMES = { source: "source", primary_key: "key table", table: "table", view: "view" };

  // ---- the graph's nodes: sources and models ------------------------------------------
  var nodes = {};
  Object.keys(manifest.sources).forEach(function (id) {
    var s = manifest.sources[id];
    nodes[id] = { id: id, label: s.source_name + "." + s.name, kind: "source", data: s,
      route: "#source/" + s.source_name + "." + s.name, parents: [] };
  });
  Object.keys(manifest.nodes).forEach(function (id) {
    var m = manifest.nodes[id];
    nodes[id] = { id: id, label: m.name, kind: m.materialized, data: m,
      route: "#model/" + m.name, parents: m.depends_on.nodes.filter(function (p) { return nodes[p] || manifest.sources[p] || manifest.nodes[p]; }) };
  });
  function byRoute(hash) {
    for (var id in nodes) { if (nodes[id].route === hash) { return nodes[id]; } }
    return null;
  }
  function color(kind) { return COLORS[kind] || COLORS.view; }
  function label(id, fallback) { return nodes[id] ? nodes[id].label : fallback; }

  function esc(text) {
    return String(text == null ? "" : text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  // ---- layered layout (longest path from the sources, barycentre ordering) ------------
  function layout() {
    var rank = {}, ids = Object.keys(nodes);
    function rankOf(id, seen) {
      if (rank[id] !== undefined) { return rank[id]; }
      if (seen[id]) { return 0; }
      seen[id] = true;
      var r = 0;
      nodes[id].parents.forEach(function (p) { if (nodes[p]) { r = Math.max(r, rankOf(p, seen) + 1); } });
      rank[id] = r;
      return r;
    }
    ids.forEach(function (id) { rankOf(id, {}); });
    var layers = [];
    ids.sort(function (a, b) { return nodes[a].label < nodes[b].label ? -1 : 1; });
    ids.forEach(function (id) { (layers[rank[id]] = layers[rank[id]] || []).push(id); });
    var order = {};
    function number() { layers.forEach(function (l) { l.forEach(function (id, i) { order[id] = i; }); }); }
    number();
    var children = {};
    ids.forEach(function (id) { nodes[id].parents.forEach(function (p) { (children[p] = children[p] || []).push(id); }); });
    function centre(list, id) {
      if (!list || !list.length) { return order[id]; }
      return list.reduce(function (s, x) { return s + order[x]; }, 0) / list.length;
    }
    for (var sweep = 0; sweep < 4; sweep++) {
      var down = sweep % 2 === 0;
      for (var i = 0; i < layers.length; i++) {
        var layer = layers[down ? i : layers.length - 1 - i];
        if (!layer) { continue; }
        var key = {};
        layer.forEach(function (id) { key[id] = centre(down ? nodes[id].parents : children[id], id); });
        layer.sort(function (a, b) { return key[a] - key[b]; });
        layer.forEach(function (id, j) { order[id] = j; });
      }
    }
    var COL = 250, ROW = 56, tallest = Math.max.apply(null, layers.map(function (l) { return l ? l.length : 0; }));
    layers.forEach(function (layer, r) {
      if (!layer) { return; }
      var offset = (tallest - layer.length) * ROW / 2;
      layer.forEach(function (id, j) {
        var n = nodes[id];
        n.w = Math.max(130, n.label.length * 7.6 + 34);
        n.h = 40;
        n.x = r * COL;
        n.y = offset + j * ROW;
      });
    });
    return { width: layers.length * COL, height: tallest * ROW };
  }

  // ---- drawing, pan and zoom ------------------------------------------------------------
  var svg = document.getElementById("dag");
  var view = { x: 0, y: 0, k: 1 };
  var viewport, size;
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var a in attrs) { e.setAttribute(a, attrs[a]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function draw() {
    size = layout();
    var defs = el("defs", {}, svg);
    var marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5",
      markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#aab3c2" }, marker);
    var litMarker = el("marker", { id: "arrow-lit", viewBox: "0 0 10 10", refX: "9", refY: "5",
      markerWidth: "6", markerHeight: "6", orient: "auto-start-reverse" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#2f6fde" }, litMarker);
    viewport = el("g", { id: "viewport" }, svg);
    Object.keys(nodes).forEach(function (id) {
      var n = nodes[id];
      n.parents.forEach(function (p) {
        var a = nodes[p];
        if (!a) { return; }
        var x1 = a.x + a.w, y1 = a.y + a.h / 2, x2 = n.x - 3, y2 = n.y + n.h / 2, mx = (x1 + x2) / 2;
        el("path", { "class": "edge", "data-from": p, "data-to": id, "marker-end": "url(#arrow)",
          d: "M" + x1 + "," + y1 + " C" + mx + "," + y1 + " " + mx + "," + y2 + " " + x2 + "," + y2 }, viewport);
      });
    });
    Object.keys(nodes).forEach(function (id) {
      var n = nodes[id];
      var g = el("g", { "class": "node", "data-id": id, "data-kind": n.kind,
        transform: "translate(" + n.x + "," + n.y + ")" }, viewport);
      var title = el("title", {}, g);
      title.textContent = n.label + " (" + (KIND_NAMES[n.kind] || n.kind) + ")";
      el("rect", { width: n.w, height: n.h, rx: 8, stroke: color(n.kind) }, g);
      el("rect", { width: 6, height: n.h, rx: 3, fill: color(n.kind), stroke: "none" }, g);
      var t = el("text", { x: 16, y: 17, "class": "name" }, g);
      t.textContent = n.label;
      var k = el("text", { x: 16, y: 31, "class": "kind" }, g);
      k.textContent = n.kind === "primary_key" ? n.data.merge_engine : (KIND_NAMES[n.kind] || n.kind);
      g.addEventListener("click", function () { location.hash = n.route; });
    });
    fit();
    var legend = document.getElementById("legend");
    legend.innerHTML = ["source", "primary_key", "table", "view"].map(function (kind) {
      return '<span><i class="dot" style="background:' + color(kind) + '"></i>' + KIND_NAMES[kind] + "</span>";
    }).join("");
  }
  function apply() { viewport.setAttribute("transform", "translate(" + view.x + "," + view.y + ") scale(" + view.k + ")"); }
  function fit() {
    var box = svg.getBoundingClientRect(), pad = 24;
    var w = box.width || 900, h = box.height || 300;
    view.k = Math.min(1.2, (w - 2 * pad) / Math.max(size.width - 100, 1), (h - 2 * pad) / Math.max(size.height, 1));
    view.x = (w - (size.width - 250 + 200) * view.k) / 2;
    view.y = (h - size.height * view.k) / 2 + 11 * view.k;
    apply();
  }
  function zoom(factor, cx, cy) {
    var k = Math.max(0.2, Math.min(4, view.k * factor));
    view.x = cx - (cx - view.x) * (k / view.k);
    view.y = cy - (cy - view.y) * (k / view.k);
    view.k = k;
    apply();
  }
  svg.addEventListener("wheel", function (e) {
    e.preventDefault();
    var box = svg.getBoundingClientRect();
    zoom(e.deltaY < 0 ? 1.12 : 1 / 1.12, e.clientX - box.left, e.clientY - box.top);
  }, { passive: false });
  var drag = null;
  svg.addEventListener("pointerdown", function (e) {
    if (e.target.closest && e.target.closest(".node")) { return; }
    drag = { x: e.clientX - view.x, y: e.clientY - view.y };
    svg.classList.add("dragging");
  });
  window.addEventListener("pointermove", function (e) {
    if (!drag) { return; }
    view.x = e.clientX - drag.x;
    view.y = e.clientY - drag.y;
    apply();
  });
  window.addEventListener("pointerup", function () { drag = null; svg.classList.remove("dragging"); });
  document.getElementById("zoom-in").onclick = function () { var b = svg.getBoundingClientRect(); zoom(1.25, b.width / 2, b.height / 2); };
  document.getElementById("zoom-out").onclick = function () { var b = svg.getBoundingClientRect(); zoom(0.8, b.width / 2, b.height / 2); };
  document.getElementById("zoom-fit").onclick = fit;

  // Highlight: the selected node with its neighbours, or the nodes a column comes from.
  function highlight(selected, lit) {
    var keep = {};
    if (selected) {
      keep[selected] = true;
      nodes[selected].parents.forEach(function (p) { keep[p] = true; });
      Object.keys(nodes).forEach(function (id) { if (nodes[id].parents.indexOf(selected) >= 0) { keep[id] = true; } });
    }
    (lit || []).forEach(function (id) { keep[id] = true; });
    svg.querySelectorAll(".node").forEach(function (g) {
      var id = g.getAttribute("data-id");
      g.classList.toggle("selected", id === selected);
      g.classList.toggle("faded", !!selected && !keep[id]);
      g.classList.toggle("lit", !!lit && lit.indexOf(id) >= 0);
    });
    svg.querySelectorAll(".edge").forEach(function (p) {
      var from = p.getAttribute("data-from"), to = p.getAttribute("data-to");
      var on = !!lit && lit.indexOf(from) >= 0 && (lit.indexOf(to) >= 0 || to === selected);
      p.classList.toggle("lit", on);
      p.setAttribute("marker-end", on ? "url(#arrow-lit)" : "url(#arrow)");
      p.classList.toggle("faded", !!selected && !(keep[from] && keep[to]));
    });
  }

  // ---- sidebar and search ----------------------------------------------------------------
  function sidebar() {
    var side = document.getElementById("side"), html = "<h3>Models</h3>", folders = {};
    Object.keys(manifest.nodes).forEach(function (id) {
      var m = manifest.nodes[id], parts = m.original_file_path.split("/");
      var folder = parts.slice(0, -1).join("/") || ".";
      (folders[folder] = folders[folder] || []).push(id);
    });
    Object.keys(folders).sort().forEach(function (folder) {
      html += "<h4>" + esc(folder) + "</h4>";
      folders[folder].sort(function (a, b) { return nodes[a].label < nodes[b].label ? -1 : 1; }).forEach(function (id) { html += navLink(id); });
    });
    html += "<h3>Sources</h3>";
    var bySource = {};
    Object.keys(manifest.sources).forEach(function (id) { (bySource[manifest.sources[id].source_name] = bySource[manifest.sources[id].source_name] || []).push(id); });
    Object.keys(bySource).sort().forEach(function (name) {
      html += "<h4>" + esc(name) + "</h4>";
      bySource[name].sort().forEach(function (id) { html += navLink(id); });
    });
    side.innerHTML = html;
  }
  function navLink(id) {
    var n = nodes[id], cols = Object.keys(n.data.columns || {}).join(" ");
    return '<a href="' + esc(n.route) + '" data-id="' + esc(id) + '" data-search="' + esc((n.label + " " + cols).toLowerCase()) +
      '"><i class="dot" style="background:' + color(n.kind) + '"></i>' + esc(n.kind === "source" ? n.data.name : n.label) + "</a>";
  }
  document.getElementById("search").addEventListener("input", function (e) {
    var q = e.target.value.trim().toLowerCase();
    document.querySelectorAll(".side a").forEach(function (a) {
      a.classList.toggle("hidden", !!q && a.getAttribute("data-search").indexOf(q) < 0);
    });
  });

  // ---- pages -----------------------------------------------------------------------------
  function sqlHtml(text) {
    var out = "", re = /(--[^\n]*|\/\*[\s\S]*?\*\/)|('(?:[^'\\]|\\.)*')|\b([A-Za-z_]+)\b|([\s\S])/g, m;
    var KW = /^(SELECT|FROM|WHERE|GROUP|BY|ORDER|UNION|ALL|AS|CAST|NULL|MERGE|INTO|USING|ON|WHEN|MATCHED|NOT|THEN|UPDATE|SET|INSERT|VALUES|CREATE|OR|REPLACE|TABLE|TEMPORARY|VIEW|AND|CASE|ELSE|END|JOIN|LEFT|INNER|OUTER|WITH|PARTITIONED|TBLPROPERTIES|IS|IN|DISTINCT|OVER|PARTITION|ROWS|BETWEEN|HAVING|LIMIT|ALTER|WRITE|ORDERED|LOCALLY|STRUCT|MAX|MIN|SUM|COUNT|COALESCE|IF|DESC|ASC|FIRST|LAST|TRUE|FALSE|EXISTS|DELETE)$/i;
    while ((m = re.exec(text))) {
      if (m[1]) { out += '<span class="cm">' + esc(m[1]) + "</span>"; }
      else if (m[2]) { out += '<span class="str">' + esc(m[2]) + "</span>"; }
      else if (m[3]) { out += KW.test(m[3]) ? '<span class="kw">' + m[3] + "</span>" : esc(m[3]); }
      else { out += esc(m[4]); }
    }
    return out;
  }
  function tabs(files, id) {
    var names = Object.keys(files);
    if (!names.length) { return '<p class="note">Nothing compiled.</p>'; }
    var html = '<div class="tabs" id="' + id + '">';
    names.forEach(function (name, i) { html += '<button type="button" data-file="' + esc(name) + '" class="' + (i ? "" : "on") + '">' + esc(name) + "</button>"; });
    html += "</div>";
    names.forEach(function (name, i) {
      html += '<pre class="sql" data-file="' + esc(name) + '"' + (i ? ' hidden' : "") + "><code>" + sqlHtml(files[name]) + "</code></pre>";
    });
    return html;
  }
  function wireTabs(root) {
    root.querySelectorAll(".tabs button").forEach(function (b) {
      b.addEventListener("click", function () {
        var bar = b.parentNode, section = bar.parentNode, file = b.getAttribute("data-file");
        bar.querySelectorAll("button").forEach(function (x) { x.classList.toggle("on", x === b); });
        section.querySelectorAll("pre.sql").forEach(function (p) { p.hidden = p.getAttribute("data-file") !== file; });
      });
    });
  }
  function typeHtml(col) {
    var origin = col.type_origin || "unknown";
    var text = col.type ? '<span class="type">' + esc(col.type) + "</span>" : "";
    var tip = { iceberg: "from the Iceberg table's metadata", inferred: "inferred from the compiled SQL (the table does not exist yet)", unknown: "no stored table and no type in the SQL" }[origin];
    return text + '<span class="origin ' + esc(origin) + '" title="' + esc(tip) + '">' + esc(origin) + "</span>";
  }
  function refHtml(ref) {
    var n = ref.unique_id && nodes[ref.unique_id];
    var name = n ? '<a class="tbl' + (n.kind === "source" ? "" : " model") + '" href="' + esc(n.route) + '">' + esc(n.label) + "</a>" : '<span class="tbl">' + esc(ref.table) + "</span>";
    return '<span class="ref" data-ref="' + esc((n ? n.label : ref.table) + "." + ref.column) + '">' + name + "." + esc(ref.column) + "</span>";
  }
  function sameRefs(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
  function lineageHtml(lineage) {
    if (!lineage) { return '<span class="none">not traced</span>'; }
    var html = lineage.sources.length ? lineage.sources.map(refHtml).join("") : '<span class="none">no source column (constant)</span>';
    if (!sameRefs(lineage.sources, lineage.direct) && lineage.direct.length) {
      html += '<div class="via">via ' + lineage.direct.map(refHtml).join("") + "</div>";
    }
    if (lineage.unresolved && lineage.unresolved.length) {
      html += '<div class="via">unresolved: ' + esc(lineage.unresolved.join(", ")) + "</div>";
    }
    return html;
  }
  function ownersHtml(owners) {
    if (!owners) { return '<span class="none">&ndash;</span>'; }
    if (!owners.length) { return '<span class="none">no source</span>'; }
    return owners.map(function (o) {
      var n = o.unique_id && nodes[o.unique_id];
      var text = n ? n.label : (o.table || o.name);
      return '<span class="ref">' + (n ? '<a href="' + esc(n.route) + '">' + esc(text) + "</a>" : esc(text)) + ' <span class="via">#' + o.branch + "</span></span>";
    }).join("");
  }
  function kv(rows) {
    return '<table class="grid kv">' + rows.filter(function (r) { return r[1] !== "" && r[1] != null; }).map(function (r) {
      return "<tr><td>" + esc(r[0]) + "</td><td>" + r[1] + "</td></tr>";
    }).join("") + "</table>";
  }
  function configValue(v) { return "<code>" + esc(typeof v === "string" ? v : JSON.stringify(v)) + "</code>"; }
  function description(text) {
    return text ? '<p class="desc">' + esc(text) + "</p>" : '<p class="desc none">No description.</p>';
  }

  function modelPage(n) {
    var m = n.data, cat = catalog.nodes[n.id] || { columns: {} }, cfg = m.config || {};
    var badges = '<span class="badge" style="background:' + color(n.kind) + '">' + esc(KIND_NAMES[n.kind] || n.kind) + "</span>";
    if (m.merge_engine) { badges += '<span class="badge light">merge_engine: ' + esc(m.merge_engine) + "</span>"; }
    (m.tags || []).forEach(function (t) { badges += '<span class="badge light">#' + esc(t) + "</span>"; });
    var html = '<h1 id="title" data-unique-id="' + esc(n.id) + '">' + esc(m.name) + "</h1>";
    html += '<div class="sub"><code>' + esc(m.relation_name) + "</code> &middot; " + esc(m.original_file_path) + "</div>";
    html += '<div class="badges">' + badges + "</div>" + description(m.description);
    (m.problems || []).forEach(function (p) { html += '<div class="problem">' + esc(p) + "</div>"; });
    html += "<h2>Details</h2>" + kv([
      ["materialized", esc(m.materialized)],
      ["merge engine", m.merge_engine ? esc(m.merge_engine) : ""],
      ["primary key", cfg.primary_key ? configValue(cfg.primary_key.join(", ")) : ""],
      ["sequence field", cfg.sequence_field ? configValue(cfg.sequence_field.join(", ")) : ""],
      ["table", cat.exists === true ? "exists in the catalog" : cat.exists === false ? "not built yet" : "metadata not read for this catalog"],
      ["depends on", m.depends_on.nodes.map(function (id) { return refHtml({ unique_id: id, table: id, column: "" }).replace(/\.<\/span>$/, "</span>"); }).join(" ")],
      ["used by", (manifest.child_map[n.id] || []).map(function (id) { return '<a href="' + esc(nodes[id].route) + '">' + esc(nodes[id].label) + "</a>"; }).join(", ")]
    ]);
    html += "<h2>Columns</h2>";
    html += '<p class="note">Types: <span class="origin iceberg">iceberg</span> from the table\'s Iceberg metadata, <span class="origin inferred">inferred</span> from the compiled SQL, <span class="origin unknown">unknown</span> otherwise. Click a column to light its sources in the graph.</p>';
    html += '<table class="grid" id="columns"><thead><tr><th>column</th><th>type</th>' + (m.materialized === "primary_key" ? "<th>owned by (branch)</th>" : "") + "<th>comes from</th><th>description</th></tr></thead><tbody>";
    Object.keys(m.columns).forEach(function (name) {
      var c = m.columns[name], t = cat.columns[name] || {};
      html += '<tr class="column-row" data-column="' + esc(name) + '"><td><span class="col-name">' + esc(name) + "</span>" +
        (c.merge ? '<div class="merge">' + esc(c.merge) + "</div>" : "") + "</td><td>" + typeHtml(t) + "</td>" +
        (m.materialized === "primary_key" ? '<td class="owners">' + ownersHtml(c.owners) + "</td>" : "") +
        '<td class="lineage">' + lineageHtml(c.lineage) + "</td><td>" + (c.description ? esc(c.description) : '<span class="none">&ndash;</span>') + "</td></tr>";
    });
    html += "</tbody></table>";
    html += "<h2>Data tests</h2>";
    if (m.tests && m.tests.length) {
      html += '<table class="grid"><thead><tr><th>test</th><th>column</th><th>severity</th></tr></thead><tbody>' + m.tests.map(function (t) {
        return "<tr><td>" + esc(t.name) + "</td><td>" + esc(t.column || "") + "</td><td>" + esc(t.severity || "error") + "</td></tr>";
      }).join("") + "</tbody></table>";
    } else { html += '<p class="note">No data tests.</p>'; }
    html += "<h2>Config</h2>" + kv(Object.keys(cfg).sort().map(function (k) { return [k, configValue(cfg[k])]; }));
    html += "<h2>Compiled SQL</h2><section>" + tabs(m.compiled_files || {}, "compiled") + "</section>";
    html += "<h2>Source</h2><section>" + tabs({ "model SQL": m.raw_code, "rendered": m.compiled_code }, "code") + "</section>";
    return html;
  }

  function sourcePage(n) {
    var s = n.data, cat = catalog.sources[n.id] || { columns: {} };
    var html = '<h1 id="title" data-unique-id="' + esc(n.id) + '">' + esc(n.label) + "</h1>";
    html += '<div class="sub"><code>' + esc(s.relation_name) + "</code> &middot; " + esc(s.original_file_path) + "</div>";
    html += '<div class="badges"><span class="badge" style="background:' + color("source") + '">source</span></div>' + description(s.description);
    html += "<h2>Details</h2>" + kv([
      ["table", cat.exists === true ? "exists in the catalog" : cat.exists === false ? "not found in the catalog" : "metadata not read for this catalog"],
      ["used by", (manifest.child_map[n.id] || []).map(function (id) { return '<a href="' + esc(nodes[id].route) + '">' + esc(nodes[id].label) + "</a>"; }).join(", ")]
    ]);
    (cat.problem ? [cat.problem] : []).forEach(function (p) { html += '<div class="problem">' + esc(p) + "</div>"; });
    html += '<h2>Columns</h2><table class="grid" id="columns"><thead><tr><th>column</th><th>type</th><th>feeds</th><th>description</th></tr></thead><tbody>';
    var names = Object.keys(cat.columns);
    Object.keys(s.columns).forEach(function (c) { if (names.indexOf(c) < 0) { names.push(c); } });
    names.forEach(function (name) {
      var feeds = (s.columns[name] || {}).feeds || [];
      html += '<tr data-column="' + esc(name) + '"><td class="col-name">' + esc(name) + "</td><td>" + typeHtml(cat.columns[name] || {}) + "</td><td>" +
        (feeds.length ? feeds.map(function (f) { return refHtml({ unique_id: f.unique_id, table: f.unique_id, column: f.column }); }).join("") : '<span class="none">&ndash;</span>') +
        "</td><td>" + ((s.columns[name] || {}).description ? esc(s.columns[name].description) : '<span class="none">&ndash;</span>') + "</td></tr>";
    });
    html += "</tbody></table>";
    return html;
  }

  function overview() {
    var models = Object.keys(manifest.nodes), keyTables = models.filter(function (id) { return manifest.nodes[id].materialized === "primary_key"; });
    var columns = models.reduce(function (s, id) { return s + Object.keys(manifest.nodes[id].columns).length; }, 0);
    var html = '<h1 id="title">' + esc(manifest.metadata.project_name) + "</h1>";
    html += '<div class="sub">catalog <code>' + esc(manifest.metadata.catalog) + "</code> (" + esc(manifest.metadata.catalog_type) + "), namespace <code>" + esc(manifest.metadata.namespace) + "</code></div>";
    html += '<div class="cards">' + [[models.length, "models"], [keyTables.length, "key tables (merge engines)"], [Object.keys(manifest.sources).length, "sources"], [columns, "model columns traced"]].map(function (c) {
      return '<div class="card"><b>' + c[0] + "</b><span>" + c[1] + "</span></div>";
    }).join("") + "</div>";
    html += '<h2>Models</h2><table class="grid"><thead><tr><th>model</th><th>materialized</th><th>engine</th><th>relation</th><th>columns</th></tr></thead><tbody>';
    models.forEach(function (id) {
      var m = manifest.nodes[id];
      html += '<tr><td><a href="' + esc(nodes[id].route) + '">' + esc(m.name) + "</a></td><td>" + esc(m.materialized) + "</td><td>" + esc(m.merge_engine || "") + "</td><td><code>" + esc(m.relation_name) + "</code></td><td>" + Object.keys(m.columns).length + "</td></tr>";
    });
    return html + "</tbody></table>";
  }

  function route() {
    // #model/<name> or #model/<name>/<column> (a column picked: its sources lit in the graph)
    var parts = decodeURIComponent(location.hash || "#").split("/");
    var n = byRoute(parts.slice(0, 2).join("/")), picked = parts.slice(2).join("/");
    var page = document.getElementById("page");
    page.innerHTML = !n ? overview() : n.kind === "source" ? sourcePage(n) : modelPage(n);
    wireTabs(page);
    highlight(n ? n.id : null, null);
    document.querySelectorAll(".side a").forEach(function (a) { a.classList.toggle("active", !!n && a.getAttribute("data-id") === n.id); });
    function pick(tr) {
      var c = n.data.columns[tr.getAttribute("data-column")], lit = [];
      (c.lineage ? c.lineage.sources.concat(c.lineage.direct) : []).forEach(function (r) { if (r.unique_id && lit.indexOf(r.unique_id) < 0) { lit.push(r.unique_id); } });
      page.querySelectorAll("tr.column-row").forEach(function (x) { x.classList.toggle("picked", x === tr); });
      highlight(n.id, lit);
    }
    page.querySelectorAll("tr.column-row").forEach(function (tr) {
      tr.addEventListener("click", function () {
        pick(tr);
        history.replaceState(null, "", n.route + "/" + encodeURIComponent(tr.getAttribute("data-column")));
      });
      if (tr.getAttribute("data-column") === picked) { pick(tr); }
    });
    document.title = (n ? n.label + " · " : "") + manifest.metadata.project_name + " · lakewide docs";
    if (!picked) { window.scrollTo(0, 0); }
  }

  document.getElementById("project").textContent = manifest.metadata.project_name;
  document.getElementById("generated").textContent = "generated " + manifest.metadata.generated_at.replace("T", " ").slice(0, 19) + " UTC";
  sidebar();
  draw();
  window.addEventListener("hashchange", route);
  window.addEventListener("resize", fit);
  route();
  document.body.setAttribute("data-ready", "true");
})();
