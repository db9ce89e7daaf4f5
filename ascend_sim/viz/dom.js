// DOM helper shared by the view modules; _widget.esm() puts it in front of each one.
function h(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

// The theme's colours for canvas drawing: the --asim-* variables of viz.css (JupyterLab's light or dark
// theme, light fallbacks elsewhere), read at draw time so a theme switch takes effect on the next draw.
function theme(el) {
  const cs = getComputedStyle(el);
  const v = (name, fallback) => (cs.getPropertyValue(name) || "").trim() || fallback;
  return { fg: v("--asim-fg", "#222"), fg2: v("--asim-fg2", "#555"), fg3: v("--asim-fg3", "#777"),
    bg: v("--asim-bg", "#fff"), bg2: v("--asim-bg2", "#f3f3f3"), border: v("--asim-border", "#ddd") };
}
