// Memory-tier traffic and per-tier occupancy. anywidget ES module, no build step.
// Geometry comes from Python (traffic_view.py): this file only draws it.

const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function fmtBytes(n) {
  const u = ["B", "KiB", "MiB", "GiB"]; let i = 0;
  while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 || n === Math.round(n) ? n.toFixed(0) : n.toFixed(1)) + " " + u[i];
}

function diagram(d) {
  const C = d.colors;
  const svg = s("svg", { viewBox: `0 0 ${d.width} ${d.height}`, width: "100%", class: "asim-diagram",
    style: `max-width:${d.width}px` });
  for (const n of d.nodes) {
    const g = s("g", { class: `asim-tier ${n.used ? "used" : "unused"}`, "data-tier": n.id });
    g.append(s("rect", { x: n.x - d.node_w / 2, y: n.y - d.node_h / 2, width: d.node_w, height: d.node_h, rx: 5,
      fill: n.fill, stroke: C["tier-stroke"] }));     // an unused tier: theme colours from viz.css
    g.append(s("text", { x: n.x, y: n.y + 4, "text-anchor": "middle" }, n.label));
    svg.append(g);
  }
  for (const e of d.edges) {
    const g = s("g", { class: "asim-edge", "data-edge": e.key });
    const tip = `${e.label[0]}\n${e.label[1]}\n${e.count ? e.count + " instructions on " + e.cores + " core(s)" : ""}`;
    g.append(s("title", {}, tip));
    const pts = (p) => p.map((q) => q.join(",")).join(" ");
    e.lines.forEach((line, i) => {
      g.append(s("polyline", { points: pts(line), fill: "none", stroke: C.link,
        "stroke-width": e.width, "stroke-opacity": 0.75 }));
      g.append(s("polygon", { points: pts(e.heads[i]), fill: C.link }));
    });
    const t = s("text", { x: e.at[0], y: e.at[1] - 2, "font-size": "10" });
    t.append(s("tspan", { x: e.at[0], dy: "0", "font-weight": "600" }, e.label[0]));
    t.append(s("tspan", { x: e.at[0], dy: "12" }, e.label[1]));
    g.append(t);
    g.addEventListener("mouseenter", () => g.querySelectorAll("polyline").forEach((l) => l.setAttribute("stroke", C["link-hover"])));
    g.addEventListener("mouseleave", () => g.querySelectorAll("polyline").forEach((l) => l.setAttribute("stroke", C.link)));
    svg.append(g);
  }
  return svg;
}

function occChart(o, cycles, fullScale, C) {
  const W = 360, H = 132, L = 56, R = 8, T = 34, B = 20;
  const top = fullScale && o.capacity ? o.capacity : Math.max(o.peak, o.allocated, 1) * 1.25;
  const x = (t) => L + (t / Math.max(cycles, 1)) * (W - L - R);
  const y = (v) => H - B - (v / top) * (H - T - B);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "asim-occ-chart", "data-tier": o.tier });
  const pts = [[x(0), y(0)]];
  let prev = 0;
  o.t.forEach((t, i) => { pts.push([x(t), y(prev)], [x(t), y(o.v[i])]); prev = o.v[i]; });
  pts.push([x(cycles), y(prev)], [x(cycles), y(0)]);
  svg.append(s("polygon", { points: pts.map((p) => p.join(",")).join(" "), fill: C.live, "fill-opacity": 0.35,
    stroke: C.live }));
  svg.append(s("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: C.axis, class: "asim-axis" }));
  svg.append(s("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: C.axis, class: "asim-axis" }));
  if (o.allocated) {
    svg.append(s("line", { x1: L, x2: W - R, y1: y(o.allocated), y2: y(o.allocated), stroke: C.reserved,
      "stroke-dasharray": "4 3" }, undefined));
  }
  if (o.capacity && o.capacity <= top) {
    svg.append(s("line", { x1: L, x2: W - R, y1: y(o.capacity), y2: y(o.capacity), stroke: C.stall,
      "stroke-width": 1.5 }));
  }
  svg.append(s("text", { x: L - 4, y: T + 4, "text-anchor": "end", "font-size": 9 }, fmtBytes(top)));
  svg.append(s("text", { x: L - 4, y: H - B, "text-anchor": "end", "font-size": 9 }, "0"));
  svg.append(s("text", { x: W - R, y: H - 6, "text-anchor": "end", "font-size": 9 }, `${Math.round(cycles).toLocaleString("en-US")} cycles`));
  const used = Math.max(o.peak, o.allocated);
  const pct = o.capacity ? ` (${((100 * used) / o.capacity).toFixed(1)}%)` : "";
  svg.append(s("text", { x: 2, y: 12, "font-size": 10.5, "font-weight": 600 },
    `${o.tier}: peak ${fmtBytes(o.peak)} live` + (o.allocated ? `, ${fmtBytes(o.allocated)} reserved` : "")));
  svg.append(s("text", { x: 2, y: 25, "font-size": 10 },
    (o.capacity ? `of ${fmtBytes(o.capacity)} capacity${pct}` : "capacity unknown")
    + (o.source === "estimate" ? " · estimated from record bytes" : "")));
  return svg;
}

function render({ model, el }) {
  const root = h("div", { class: "asim-view asim-traffic" });
  el.append(root);
  const title = h("span", { class: "asim-title" });
  const coreSel = h("select", { title: "core whose occupancy is shown" });
  const scaleCb = h("input", { type: "checkbox" });
  const toolbar = h("div", { class: "asim-toolbar" }, title, "occupancy of", coreSel,
    h("label", { title: "draw occupancy on the scale of the tier's full capacity" }, scaleCb, " full capacity scale"));
  const diag = h("div", { class: "asim-diagram-box" });
  const occ = h("div", { class: "asim-occ" });
  const legend = h("div", { class: "asim-hint" });
  root.append(toolbar, diag, h("div", { class: "asim-hint", text: "Occupancy over time:" }), occ, legend);

  function draw() {
    const d = model.get("data") || {};
    if (!d.nodes) return;
    title.textContent = d.title;
    diag.replaceChildren(diagram(d));
    const core = model.get("core");
    coreSel.replaceChildren(...d.units.map((u) => {
      const o = h("option", { value: String(u), text: d.unit_names[String(u)] || String(u) });
      if (u === core) o.selected = true;
      return o;
    }));
    const mine = d.occupancy.filter((o) => o.unit === core);
    occ.replaceChildren(...mine.map((o) => occChart(o, d.cycles, scaleCb.checked, d.colors)));
    legend.textContent = "Green: bytes live in the tier; dashed: reserved by InitBuffer; red: capacity. " + d.note;
    root.dataset.edges = String(d.edges.length);
    root.dataset.tiers = String(d.nodes.filter((n) => n.used).length);
    root.dataset.charts = String(mine.length);
    root.dataset.theme = document.body.dataset.jpThemeName || "";
    root.dataset.rendered = "1";
  }
  coreSel.addEventListener("change", () => { model.set("core", Number(coreSel.value)); model.save_changes(); draw(); });
  scaleCb.addEventListener("change", draw);
  model.on("change:data", draw);
  model.on("change:core", draw);
  const offTheme = onThemeChange(draw);
  draw();
  return () => { offTheme(); model.off("change:data", draw); model.off("change:core", draw); };
}

export default { render };
