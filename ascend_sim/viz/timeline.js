// Pipeline timeline (流水线时间线) of one or more traces on one cycle axis.
// anywidget ES module: no build step. Data layout: see timeline.py (timeline_payload).

const ROW_H = 18;      // px per row
const HEAD_H = 20;     // px of a trace header row (several traces)
const GUTTER = 132;    // px for row labels
const RULER_H = 22;    // px of the cycle ruler
const MAX_ARROWS = 300;
const DENSE_ARROWS = 40;   // more visible arrows than this go under the bars (they only show in the gaps)

function fmtInt(n) { return Math.round(n).toLocaleString("en-US"); }
function fmtBytes(n) {
  const u = ["B", "KiB", "MiB", "GiB"]; let i = 0;
  while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 || n === Math.round(n) ? n.toFixed(0) : n.toFixed(1)) + " " + u[i];
}
function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
}
// Units whose block index (blocks[i] for available[i]) matches "0-3,8"; all if empty.
function parseCores(spec, available, blocks) {
  spec = (spec || "").replace(/\s+/g, "");
  if (spec === "" || spec === "all") return available.slice();
  const chosen = new Set();
  for (const part of spec.split(",")) {
    if (!part) continue;
    const [a, b] = part.split("-").map(Number);
    if (Number.isNaN(a)) continue;
    const hi = Number.isNaN(b) || b === undefined ? a : b;
    for (let c = Math.min(a, hi); c <= Math.max(a, hi); c++) chosen.add(c);
  }
  return available.filter((c, i) => chosen.has(blocks ? blocks[i] : c));
}

// Index a trace group: lanes (core, pipe) -> record positions sorted by start.
function prepare(data) {
  for (const g of data.groups) {
    const C = g.cols;
    g.pos = new Map();
    g.lanes = new Map();
    for (let k = 0; k < g.n; k++) {
      g.pos.set(C.i[k], k);
      const key = C.c[k] * 64 + C.p[k];
      if (!g.lanes.has(key)) g.lanes.set(key, []);
      g.lanes.get(key).push(k);
    }
    for (const lane of g.lanes.values()) lane.sort((a, b) => C.s[a] - C.s[b]);
    // end times along a lane are non-decreasing for an in-order pipe; keep a prefix max for search
    g.laneMaxEnd = new Map();
    g.laneBusy = new Map();      // busy share of each (core, pipe) lane over the trace
    for (const [key, lane] of g.lanes) {
      const m = new Float64Array(lane.length); let run = -Infinity, busy = 0;
      lane.forEach((k, j) => { run = Math.max(run, C.e[k]); m[j] = run; busy += C.e[k] - C.s[k]; });
      g.laneMaxEnd.set(key, m);
      g.laneBusy.set(key, busy / Math.max(g.cycles, 1));
    }
  }
}

// First lane position whose running max end >= t.
function firstVisible(maxEnd, t) {
  let lo = 0, hi = maxEnd.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (maxEnd[mid] < t) lo = mid + 1; else hi = mid; }
  return lo;
}

function computeRows(data, st) {
  const rows = [];
  let y = 0;
  const multi = data.groups.length > 1;
  data.groups.forEach((g, gi) => {
    if (multi) { rows.push({ type: "head", g: gi, y, h: HEAD_H, label: g.header }); y += HEAD_H; }
    const cores = parseCores(st.cores, g.cores, g.core_blocks);
    const many = g.cores.length > 1;
    for (const c of cores) {
      const cname = g.core_names[g.cores.indexOf(c)];
      if (st.expanded.has(c)) {
        g.pipes.forEach((p, j) => {
          const name = data.pipes[p];
          const label = many ? `${j === 0 ? "▾ " : "  "}${cname} ${name}` : name;
          rows.push({ type: "pipe", g: gi, core: c, pipe: p, y, h: ROW_H, label });
          y += ROW_H;
        });
      } else {
        rows.push({ type: "sum", g: gi, core: c, y, h: ROW_H, label: `▸ ${cname} (all pipes)` });
        y += ROW_H;
      }
    }
  });
  return { rows, height: y };
}

function stallPattern(ctx, color) {
  const c = document.createElement("canvas"); c.width = 6; c.height = 6;
  const x = c.getContext("2d"); x.strokeStyle = color; x.lineWidth = 1.2;
  x.beginPath(); x.moveTo(0, 6); x.lineTo(6, 0); x.moveTo(-3, 3); x.lineTo(3, -3); x.moveTo(3, 9); x.lineTo(9, 3); x.stroke();
  return ctx.createPattern(c, "repeat");
}

function niceStep(span, px) {
  const target = span / Math.max(px / 90, 1);
  const p = Math.pow(10, Math.floor(Math.log10(target)));
  for (const m of [1, 2, 5, 10]) if (m * p >= target) return Math.max(m * p, 1);   // cycles are whole
  return Math.max(10 * p, 1);
}

function render({ model, el }) {
  const root = h("div", { class: "asim-view asim-timeline" });
  el.append(root);
  const title = h("span", { class: "asim-title" });
  const coresIn = h("input", { type: "text", placeholder: "all", title: "cores to show, e.g. 0-3,8" });
  const fromIn = h("input", { type: "number", title: "first cycle" });
  const toIn = h("input", { type: "number", title: "last cycle" });
  const btn = (label, tip) => h("button", { type: "button", title: tip, text: label });
  const bGo = btn("zoom to", "show the cycle range typed on the left");
  const bIn = btn("+", "zoom in"), bOut = btn("−", "zoom out"), bReset = btn("reset", "whole launch");
  const bExp = btn("expand all", "one row per pipe for every shown core");
  const bCol = btn("collapse all", "one summary row per core");
  const arrowsCb = h("input", { type: "checkbox" });
  const arrowsNote = h("span", { class: "asim-hint" });
  const toolbar = h("div", { class: "asim-toolbar" }, title, "cores", coresIn, "cycles", fromIn, "–", toIn,
    bGo, bIn, bOut, bReset, bExp, bCol, h("label", {}, arrowsCb, " wait arrows"), arrowsNote);
  const legend = h("div", { class: "asim-legend" });
  const ruler = h("canvas", { class: "asim-ruler" });
  const canvas = h("canvas", { class: "asim-canvas" });
  const scroll = h("div", { class: "asim-scroll" }, canvas);
  const tip = h("div", { class: "asim-tip" });
  const detail = h("div", { class: "asim-detail" });
  const hint = h("div", { class: "asim-hint", text:
    "Hover a bar for details, click to pin it. Drag to pan, drag on the ruler to zoom to a range, "
    + "Ctrl/⌘ + wheel to zoom, double-click to reset. Click a row label to expand or collapse a core." });
  root.append(toolbar, legend, ruler, scroll, tip, detail, hint);

  let data = null, layout = null, maxC = 1;
  const st = { cores: "", expanded: new Set(), view: [0, 1], selected: null, arrows: true };
  let pattern = null;

  function load() {
    data = model.get("data") || { groups: [], pipes: [], kinds: [] };
    prepare(data);
    maxC = Math.max(1, ...data.groups.map((g) => g.cycles));
    st.cores = model.get("cores") || "";
    st.expanded = new Set(model.get("expanded") || []);
    st.arrows = model.get("show_arrows");
    const vr = model.get("view_range") || [];
    st.view = vr.length === 2 && vr[1] > vr[0] ? [vr[0], vr[1]] : [0, maxC];
    const sel = model.get("selected") || [];
    st.selected = sel.length === 2 ? sel : null;
    coresIn.value = st.cores; arrowsCb.checked = st.arrows;
    title.textContent = data.title || "";
    legend.replaceChildren(...data.kinds.filter((c) => data.present.includes(c[0])).map(([name, color, desc]) =>
      h("span", { title: desc }, h("i", { class: "asim-swatch", style: `background:${color}` }), name)),
    h("span", { title: "time an instruction was ready but waited on a synchronisation edge" },
      h("i", { class: "asim-swatch stall", style: `color:${data.stall_color}` }), "stall (waiting on sync)"),
    h("span", { title: "from the end of the instruction that released a stall to the start of the one that waited" },
      h("i", { class: "asim-swatch arrow", style: `border-top-color:${data.stall_color}` }), "wait arrow"));
    draw();
  }

  function x2px(x, w) { return GUTTER + ((x - st.view[0]) / (st.view[1] - st.view[0])) * (w - GUTTER - 8); }
  function px2x(px, w) { return st.view[0] + ((px - GUTTER) / (w - GUTTER - 8)) * (st.view[1] - st.view[0]); }

  function sizeCanvas(c, w, hgt) {
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(w * dpr); c.height = Math.round(hgt * dpr);
    c.style.width = w + "px"; c.style.height = hgt + "px";
    const ctx = c.getContext("2d"); ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return ctx;
  }

  function drawRuler(w) {
    const ctx = sizeCanvas(ruler, w, RULER_H);
    ctx.clearRect(0, 0, w, RULER_H);
    const T = theme(root);
    ctx.fillStyle = T.bg2; ctx.fillRect(0, 0, w, RULER_H);
    ctx.fillStyle = T.fg; ctx.font = "11px system-ui, sans-serif"; ctx.textBaseline = "middle";
    ctx.fillText("cycles", 6, RULER_H / 2);
    const step = niceStep(st.view[1] - st.view[0], w - GUTTER);
    ctx.strokeStyle = T.fg3; ctx.beginPath();
    for (let t = Math.ceil(st.view[0] / step) * step; t <= st.view[1]; t += step) {
      const x = x2px(t, w); ctx.moveTo(x, RULER_H - 6); ctx.lineTo(x, RULER_H);
      const label = fmtInt(t);
      if (x + 2 + ctx.measureText(label).width < w) ctx.fillText(label, x + 2, RULER_H / 2 - 2);
    }
    ctx.stroke();
    if (brush) {
      ctx.fillStyle = "rgba(0,114,178,.2)";
      ctx.fillRect(Math.min(brush[0], brush[1]), 0, Math.abs(brush[1] - brush[0]), RULER_H);
    }
    return step;
  }

  function draw() {
    if (!data) return;
    const w = Math.max(root.clientWidth || el.clientWidth || 800, 360);
    layout = computeRows(data, st);
    if (document.activeElement !== fromIn) fromIn.value = Math.round(st.view[0]);   // never under the learner's typing
    if (document.activeElement !== toIn) toIn.value = Math.round(st.view[1]);
    const step = drawRuler(w);
    const H = Math.max(layout.height, ROW_H);
    scroll.style.maxHeight = (model.get("max_height") || 520) + "px";
    const ctx = sizeCanvas(canvas, w, H);
    if (!pattern) pattern = stallPattern(ctx, data.stall_color);
    const T = theme(root);
    ctx.clearRect(0, 0, w, H);
    ctx.font = "11px system-ui, sans-serif"; ctx.textBaseline = "middle";
    const colors = data.kinds.map((c) => c[1]);
    const laneY = new Map();   // "g|core|pipe" -> [y centre, height] of drawn lane
    let bars = 0, lastCore = null, shade = false;
    // row backgrounds, labels and grid
    for (const row of layout.rows) {
      if (row.type === "head") {
        ctx.fillStyle = T.bg2; ctx.fillRect(0, row.y, w, row.h);
        ctx.fillStyle = T.fg; ctx.font = "bold 11px system-ui, sans-serif";
        ctx.fillText(row.label, 6, row.y + row.h / 2); ctx.font = "11px system-ui, sans-serif";
        lastCore = null; continue;
      }
      if (row.core !== lastCore) { shade = !shade; lastCore = row.core; }
      ctx.fillStyle = T.bg; ctx.fillRect(0, row.y, w, row.h);
      if (shade) { ctx.fillStyle = "rgba(128,128,128,.09)"; ctx.fillRect(0, row.y, w, row.h); }
      ctx.fillStyle = T.fg;
      if (row.type === "pipe") {      // the pipe's busy share over the launch, right-aligned in the gutter
        const busy = data.groups[row.g].laneBusy.get(row.core * 64 + row.pipe) || 0;
        ctx.fillText(row.label, 6, row.y + row.h / 2, GUTTER - 44);
        ctx.fillStyle = T.fg3; ctx.textAlign = "right";
        ctx.fillText(`${Math.round(100 * busy)}%`, GUTTER - 6, row.y + row.h / 2); ctx.textAlign = "left";
      } else {
        ctx.fillText(row.label, 6, row.y + row.h / 2, GUTTER - 10);
      }
    }
    ctx.strokeStyle = "rgba(128,128,128,.18)"; ctx.beginPath();
    for (let t = Math.ceil(st.view[0] / step) * step; t <= st.view[1]; t += step) {
      const x = x2px(t, w); ctx.moveTo(x, 0); ctx.lineTo(x, H);
    }
    ctx.stroke();
    ctx.save(); ctx.beginPath(); ctx.rect(GUTTER, 0, w - GUTTER, H); ctx.clip();
    const lanesOf = (row, g) => (row.type === "pipe" ? [[row.pipe, row.y + 3, row.h - 6]]
      : g.pipes.map((p, j) => [p, row.y + 2 + (j * (row.h - 4)) / g.pipes.length, (row.h - 4) / g.pipes.length - 0.5]));
    for (const row of layout.rows) {
      if (row.type === "head") continue;
      for (const [p, ly, lh] of lanesOf(row, data.groups[row.g])) laneY.set(`${row.g}|${row.core}|${p}`, [ly + lh / 2, lh]);
    }
    // wait arrows: from the end of the releasing record to the start of the stalled one
    const arrows = [];
    const wantAll = st.arrows;
    const sel = st.selected;
    for (const row of layout.rows) {
      if (row.type !== "pipe") continue;
      const g = data.groups[row.g], C = g.cols, lane = g.lanes.get(row.core * 64 + row.pipe);
      if (!lane) continue;
      const maxEnd = g.laneMaxEnd.get(row.core * 64 + row.pipe);
      for (let j = firstVisible(maxEnd, st.view[0]); j < lane.length; j++) {
        const k = lane[j];
        if (C.r[k] > st.view[1]) break;
        const isSel = sel && sel[0] === row.g && sel[1] === C.i[k];
        if (C.w[k] < 0 || C.s[k] <= C.r[k] || !(wantAll || isSel)) continue;
        const src = g.pos.get(C.w[k]);
        if (src === undefined) continue;
        const from = laneY.get(`${row.g}|${C.c[src]}|${C.p[src]}`);
        if (!from) continue;
        arrows.push([x2px(C.e[src], w), from[0], x2px(C.s[k], w), row.y + row.h / 2, isSel]);
      }
    }
    const drawn = arrows.length <= MAX_ARROWS ? arrows
      : arrows.filter((a) => a[4]).concat(arrows.filter((a) => !a[4]).slice(0, MAX_ARROWS));
    arrowsNote.textContent = arrows.length > drawn.length
      ? `showing ${fmtInt(drawn.length)} of ${fmtInt(arrows.length)} arrows: zoom in or show fewer cores for all` : "";
    // Many arrows go under the bars, thin and faint, so they never smear over what the bars show; a few (and the
    // selected record's) go on top.
    const dense = drawn.length > DENSE_ARROWS;
    const arrowColor = (data.colors && data.colors.stall) || data.stall_color;
    const drawArrows = (list) => {
      for (const [x0, y0, x1, y1, isSel] of list) {
        ctx.strokeStyle = isSel ? T.fg : arrowColor; ctx.fillStyle = ctx.strokeStyle;
        ctx.globalAlpha = isSel ? 1 : dense ? 0.55 : 0.85; ctx.lineWidth = isSel ? 1.6 : 1;
        ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
        const a = Math.atan2(y1 - y0, x1 - x0);
        ctx.beginPath(); ctx.moveTo(x1, y1);
        ctx.lineTo(x1 - 6 * Math.cos(a - 0.4), y1 - 6 * Math.sin(a - 0.4));
        ctx.lineTo(x1 - 6 * Math.cos(a + 0.4), y1 - 6 * Math.sin(a + 0.4)); ctx.fill();
      }
      ctx.globalAlpha = 1;
    };
    if (dense) drawArrows(drawn.filter((a) => !a[4]));
    for (const row of layout.rows) {
      if (row.type === "head") continue;
      const g = data.groups[row.g], C = g.cols;
      for (const [p, ly, lh] of lanesOf(row, g)) {
        const key = row.core * 64 + p, lane = g.lanes.get(key);
        if (!lane) continue;
        const maxEnd = g.laneMaxEnd.get(key);
        let lastPx = -1;
        for (let j = firstVisible(maxEnd, st.view[0]); j < lane.length; j++) {
          const k = lane[j];
          if (C.r[k] > st.view[1] && C.s[k] > st.view[1]) break;
          const xs = x2px(C.s[k], w), xe = x2px(C.e[k], w);
          if (row.type === "pipe" && C.s[k] > C.r[k]) {
            const xr = x2px(C.r[k], w);
            ctx.globalAlpha = 0.45; ctx.fillStyle = pattern;         // quiet: the bars are what matter
            ctx.fillRect(xr, ly + lh * 0.3, xs - xr, lh * 0.4); ctx.globalAlpha = 1;
          }
          if (xe - xs < 1 && Math.floor(xs) === lastPx) continue;   // many bars in one pixel
          lastPx = Math.floor(xs);
          ctx.fillStyle = colors[C.k[k]];
          ctx.fillRect(xs, ly, xe - xs > 4 ? xe - xs - 1 : Math.max(xe - xs, 1), lh);   // 1 px gap between long bars
          bars++;
        }
      }
    }
    drawArrows(dense ? drawn.filter((a) => a[4]) : drawn);
    ctx.globalAlpha = 1;
    if (sel) {   // outline the selected record
      const g = data.groups[sel[0]];
      const k = g && g.pos.get(sel[1]);
      if (k !== undefined) {
        const ly = laneY.get(`${sel[0]}|${g.cols.c[k]}|${g.cols.p[k]}`);
        if (ly) {
          ctx.strokeStyle = T.fg; ctx.lineWidth = 2;
          const xs = x2px(g.cols.s[k], w), xe = x2px(g.cols.e[k], w);
          ctx.strokeRect(xs - 1, ly[0] - ly[1] / 2 - 1, Math.max(xe - xs, 1) + 2, ly[1] + 2);
        }
      }
    }
    ctx.restore();
    root.dataset.rows = String(layout.rows.filter((r) => r.type !== "head").length);
    root.dataset.bars = String(bars);
    root.dataset.arrows = String(drawn.length);
    root.dataset.arrowLayer = dense ? "under" : "over";
    root.dataset.theme = document.body.dataset.jpThemeName || "";   // the theme this drawing used
    root.dataset.view = `${Math.round(st.view[0])}-${Math.round(st.view[1])}`;
    root.dataset.fg = T.fg;        // the label colour drawn on the canvas (the browser test checks its contrast)
    root.dataset.rendered = "1";
  }

  // ---------------------------------------------------------------- hit testing and details
  function rowAt(y) { return layout ? layout.rows.find((r) => y >= r.y && y < r.y + r.h) : undefined; }

  function recordAt(px, py) {
    const row = rowAt(py);
    if (!row || row.type === "head" || px < GUTTER) return null;
    const g = data.groups[row.g], C = g.cols, w = canvas.clientWidth;
    let pipes = [row.pipe];
    if (row.type === "sum") {
      const j = Math.floor(((py - row.y - 2) / (row.h - 4)) * g.pipes.length);
      pipes = [g.pipes[Math.max(0, Math.min(g.pipes.length - 1, j))]];
    }
    const tol = (3 / (w - GUTTER - 8)) * (st.view[1] - st.view[0]);
    const x = px2x(px, w);
    let best = null, bestD = Infinity;
    for (const p of pipes) {
      const key = row.core * 64 + p, lane = g.lanes.get(key);
      if (!lane) continue;
      const maxEnd = g.laneMaxEnd.get(key);
      for (let j = firstVisible(maxEnd, x - tol); j < lane.length; j++) {
        const k = lane[j];
        const lo = row.type === "pipe" ? Math.min(C.r[k], C.s[k]) : C.s[k];
        if (lo > x + tol) break;
        if (x >= lo - tol && x <= C.e[k] + tol) {
          const d = x < C.s[k] ? C.s[k] - x : x > C.e[k] ? x - C.e[k] : 0;
          if (d < bestD) { best = [row.g, k]; bestD = d; }
        }
      }
    }
    return best;
  }

  function describe(gi, k) {
    const g = data.groups[gi], C = g.cols;
    const tier = (t) => g.tiers[t] || "";
    const move = C.b[k] ? `${fmtBytes(C.b[k])}` + (tier(C.t[k]) || tier(C.d[k]) ? ` ${tier(C.t[k]) || "·"} → ${tier(C.d[k]) || "·"}` : "") : "";
    const stall = C.s[k] - C.r[k];
    let waited = "";
    if (C.w[k] >= 0 && g.pos.has(C.w[k])) {
      const q = g.pos.get(C.w[k]);
      waited = ` after <b>${esc(g.ops[g.cols.o[q]])}</b> on ${data.pipes[g.cols.p[q]]} (record ${C.w[k]})`;
    }
    const kl = g.klasses[C.x[k]];
    return `<b>${esc(g.ops[C.o[k]])}</b> on ${esc(g.core_names[g.cores.indexOf(C.c[k])])} ${data.pipes[C.p[k]]}`
      + ` <span style="color:${data.kinds[C.k[k]][1]}">■</span> ${esc(data.kinds[C.k[k]][0])}${kl ? " / " + esc(kl) : ""}`
      + (data.groups.length > 1 ? ` <i>(${esc(g.label)})</i>` : "")
      + `<br>cycles ${fmtInt(C.s[k])} – ${fmtInt(C.e[k])} (<b>${fmtInt(C.e[k] - C.s[k])}</b>)`
      + (stall > 0 ? `, stalled ${fmtInt(stall)}${waited}` : "")
      + (move ? `<br>moved ${esc(move)}` : "")
      + (C.f[k] ? `<br>${fmtInt(C.f[k])} ops` : "")
      + (g.lines[C.l[k]] ? `<br><code>${esc(g.lines[C.l[k]])}</code> <code>${esc(g.sources[C.l[k]])}</code>` : "")
      + `<br><span class="asim-hint">record ${C.i[k]}</span>`;
  }

  // ---------------------------------------------------------------- interaction
  let drag = null, brush = null, justDragged = false;
  const clampView = (a, b) => {
    const span = Math.max(b - a, 4);
    a = Math.max(0, Math.min(a, maxC - Math.min(span, maxC))); b = Math.min(maxC, a + span);
    st.view = [a, b];
  };
  let saveTimer = null;
  function pushView() {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(() => { model.set("view_range", [st.view[0], st.view[1]]); model.save_changes(); }, 150);
  }
  function zoom(f, cx) {
    const w = canvas.clientWidth, c = cx === undefined ? (st.view[0] + st.view[1]) / 2 : px2x(cx, w);
    clampView(c - (c - st.view[0]) * f, c + (st.view[1] - c) * f); draw(); pushView();
  }
  function pos(ev, target) { const r = target.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; }

  canvas.addEventListener("mousemove", (ev) => {
    const [x, y] = pos(ev, canvas);
    if (drag) {
      const dx = ((x - drag.x) / (canvas.clientWidth - GUTTER - 8)) * (drag.v[1] - drag.v[0]);
      if (Math.abs(x - drag.x) > 2) drag.moved = true;
      clampView(drag.v[0] - dx, drag.v[1] - dx); draw(); return;
    }
    const hit = recordAt(x, y);
    if (!hit) { tip.style.display = "none"; return; }
    tip.innerHTML = describe(hit[0], hit[1]);
    tip.style.display = "block";
    const rr = root.getBoundingClientRect();
    const left = Math.min(ev.clientX - rr.left + 14, rr.width - tip.offsetWidth - 4);
    tip.style.left = Math.max(0, left) + "px";
    const below = ev.clientY + 14 + tip.offsetHeight <= Math.min(window.innerHeight, rr.bottom + 40);
    tip.style.top = (below ? ev.clientY - rr.top + 14 : ev.clientY - rr.top - tip.offsetHeight - 8) + "px";
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  canvas.addEventListener("mousedown", (ev) => {
    const [x] = pos(ev, canvas);
    if (x < GUTTER) return;
    drag = { x, v: st.view.slice(), moved: false }; canvas.style.cursor = "grabbing";
  });
  const up = () => {
    if (drag) { canvas.style.cursor = ""; justDragged = drag.moved; if (drag.moved) pushView(); drag = null; }
    if (brush) {
      const w = ruler.clientWidth, a = px2x(Math.min(...brush), w), b = px2x(Math.max(...brush), w);
      brush = null;
      if (b - a > 0) { clampView(a, b); pushView(); }
      draw();
    }
  };
  window.addEventListener("mouseup", up);
  canvas.addEventListener("click", (ev) => {
    const [x, y] = pos(ev, canvas);
    if (justDragged) { justDragged = false; return; }
    if (x < GUTTER) {
      const row = rowAt(y);
      if (row && row.type !== "head") {
        if (st.expanded.has(row.core)) st.expanded.delete(row.core); else st.expanded.add(row.core);
        model.set("expanded", [...st.expanded].sort((a, b) => a - b)); model.save_changes(); draw();
      }
      return;
    }
    const hit = recordAt(x, y);
    st.selected = hit ? [hit[0], data.groups[hit[0]].cols.i[hit[1]]] : null;
    detail.innerHTML = hit ? describe(hit[0], hit[1]) : "";
    model.set("selected", st.selected || []); model.save_changes(); draw();
  });
  canvas.addEventListener("dblclick", () => { clampView(0, maxC); draw(); pushView(); });
  canvas.addEventListener("wheel", (ev) => {
    if (!(ev.ctrlKey || ev.metaKey)) return;           // plain wheel scrolls the notebook
    ev.preventDefault();
    zoom(ev.deltaY > 0 ? 1.25 : 0.8, pos(ev, canvas)[0]);
  }, { passive: false });
  ruler.addEventListener("mousedown", (ev) => { const [x] = pos(ev, ruler); brush = [x, x]; drawRuler(ruler.clientWidth); });
  ruler.addEventListener("mousemove", (ev) => { if (brush) { brush[1] = pos(ev, ruler)[0]; drawRuler(ruler.clientWidth); } });
  bIn.onclick = () => zoom(0.5);
  bOut.onclick = () => zoom(2);
  bReset.onclick = () => { clampView(0, maxC); draw(); pushView(); };
  bGo.onclick = () => {
    const a = Number(fromIn.value), b = Number(toIn.value);
    if (Number.isFinite(a) && Number.isFinite(b) && b > a) { clampView(a, b); draw(); pushView(); }
  };
  const shownCores = () => data.groups.flatMap((g) => parseCores(st.cores, g.cores, g.core_blocks));
  bExp.onclick = () => { st.expanded = new Set(shownCores()); model.set("expanded", [...st.expanded]); model.save_changes(); draw(); };
  bCol.onclick = () => { st.expanded = new Set(); model.set("expanded", []); model.save_changes(); draw(); };
  const applyCores = () => { st.cores = coresIn.value.trim(); model.set("cores", st.cores); model.save_changes(); draw(); };
  coresIn.addEventListener("change", applyCores);
  coresIn.addEventListener("keydown", (ev) => { if (ev.key === "Enter") applyCores(); });
  for (const inp of [fromIn, toIn]) inp.addEventListener("keydown", (ev) => { if (ev.key === "Enter") bGo.onclick(); });
  arrowsCb.addEventListener("change", () => { st.arrows = arrowsCb.checked; model.set("show_arrows", st.arrows); model.save_changes(); draw(); });

  const onData = () => { pattern = null; load(); };
  const onState = () => {
    st.cores = model.get("cores") || "";
    if (document.activeElement !== coresIn) coresIn.value = st.cores;
    st.expanded = new Set(model.get("expanded") || []);
    st.arrows = model.get("show_arrows"); arrowsCb.checked = st.arrows;
    const vr = model.get("view_range") || [];
    if (vr.length === 2 && vr[1] > vr[0]) st.view = [vr[0], vr[1]]; else st.view = [0, maxC];
    draw();
  };
  model.on("change:data", onData);
  for (const k of ["cores", "expanded", "show_arrows", "view_range", "max_height"]) model.on(`change:${k}`, onState);
  const ro = new ResizeObserver(() => draw());
  ro.observe(root);
  const offTheme = onThemeChange(() => draw());
  load();
  return () => {
    ro.disconnect(); offTheme(); window.removeEventListener("mouseup", up);
    model.off("change:data", onData);
    for (const k of ["cores", "expanded", "show_arrows", "view_range", "max_height"]) model.off(`change:${k}`, onState);
  };
}

export default { render };
