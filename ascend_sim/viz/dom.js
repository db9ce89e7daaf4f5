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

// Call redraw() whenever the page's theme changes, so colours read by theme() are never stale: JupyterLab sets
// data-jp-theme-name / data-jp-theme-light on <body> once the new theme's CSS is in; VS Code and others switch
// <body>'s class; elsewhere the OS colour scheme may change. Redraws once on the next frame and once more a
// moment later (a theme's stylesheet may still be settling). Returns the function that stops listening.
function onThemeChange(redraw) {
  let frame = 0, timer = 0;
  const kick = () => {
    cancelAnimationFrame(frame); clearTimeout(timer);
    frame = requestAnimationFrame(() => redraw());
    timer = setTimeout(() => redraw(), 250);
  };
  const mo = new MutationObserver(kick);
  mo.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-name", "data-jp-theme-light", "class"] });
  const mq = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  if (mq) mq.addEventListener("change", kick);
  return () => { mo.disconnect(); if (mq) mq.removeEventListener("change", kick); cancelAnimationFrame(frame); clearTimeout(timer); };
}
