// mathlas search page and document page. Plain JavaScript, no build step; KaTeX renders the math.
"use strict";

// ----------------------------------------------------------------------------- the API

const TOKEN_KEY = "mathlas-token";

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path, params) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    for (const x of [].concat(v)) if (x !== undefined && x !== null && x !== "") url.searchParams.append(k, x);
  }
  const headers = {Accept: "application/json"};
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  const r = await fetch(url, {headers});
  let body = null;
  try { body = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) {
    if (r.status === 401) showToken();
    throw new ApiError(r.status, (body && body.error) || r.statusText);
  }
  return body;
}

function showToken() {
  const box = document.getElementById("token-box");
  if (!box) return;
  box.hidden = false;
  const input = document.getElementById("token");
  document.getElementById("token-save").onclick = () => {
    localStorage.setItem(TOKEN_KEY, input.value.trim());
    box.hidden = true;
    start();
  };
  input.onkeydown = (e) => { if (e.key === "Enter") document.getElementById("token-save").click(); };
}

// ----------------------------------------------------------------------------- LaTeX to HTML

// Macros the sources define in their own preambles (Stacks Project, HoTT book, Open Logic,
// PlanetMath), chosen by how often KaTeX met them undefined in the default bundle.
const op = (name) => `\\mathop{\\mathrm{${name}}}\\nolimits`;
const MACROS = {
  "\\Spec": op("Spec"), "\\Proj": op("Proj"), "\\Hom": op("Hom"), "\\Mor": op("Mor"), "\\Ext": op("Ext"),
  "\\Tor": op("Tor"), "\\Ker": op("Ker"), "\\Coker": op("Coker"), "\\Im": op("Im"), "\\colim": op("colim"),
  "\\Gal": op("Gal"), "\\Pic": op("Pic"), "\\Br": op("Br"), "\\Supp": op("Supp"), "\\Ass": op("Ass"),
  "\\Der": op("Der"), "\\Sym": op("Sym"), "\\Tr": op("Tr"), "\\Norm": op("Norm"), "\\Spf": op("Spf"),
  "\\Div": op("Div"), "\\Lim": op("lim"), "\\Tot": op("Tot"), "\\Fun": op("Fun"), "\\Isom": op("Isom"),
  "\\Aut": op("Aut"), "\\End": op("End"), "\\CH": op("CH"), "\\NL": "\\mathop{N\\!L}\\nolimits", "\\id": "\\text{id}",
  "\\Ob": "\\text{Ob}", "\\etale": "{\\acute{e}tale}", "\\proetale": "{pro\\text{-}\\acute{e}tale}",
  "\\Sch": "\\textit{Sch}", "\\Sh": "\\textit{Sh}", "\\QCoh": "\\textit{QCoh}", "\\Mod": "\\textit{Mod}",
  "\\Ab": "\\textit{Ab}", "\\Sets": "\\textit{Sets}", "\\SheafHom": "\\mathcal{H}\\!\\mathit{om}",
  "\\Curvesstack": "\\mathcal{C}\\!\\mathit{urves}", "\\mbox": "\\text{#1}", "\\Cech": "\\check{C}ech",
  "\\defeq": "\\vcentcolon\\equiv", "\\jdeq": "\\equiv", "\\prd": "\\prod", "\\sm": "\\sum", "\\UU": "\\mathcal{U}",
  "\\type": "\\mathsf{Type}", "\\refl": "\\mathsf{refl}", "\\eqv": "\\simeq", "\\apfunc": "\\mathsf{ap}",
  "\\blank": "\\mathord{\\text{--}}", "\\unit": "\\mathbf{1}", "\\nat": "\\mathbb{N}", "\\tuple": "\\left(#1\\right)",
  "\\trunc": "\\left\\Vert #2\\right\\Vert_{#1}", "\\Rats": "\\mathbb{Q}", "\\Ints": "\\mathbb{Z}",
  "\\Proves": "\\vdash", "\\mSat": "\\vDash", "\\Sat": "\\vDash", "\\Lang": "\\mathcal{L}", "\\Th": "\\mathrm{Th}",
  "\\True": "\\mathbb{T}", "\\Struct": "\\mathfrak{#1}", "\\mModel": "\\mathfrak{M}",
  "\\Q": "\\mathbb{Q}", "\\Z": "\\mathbb{Z}", "\\R": "\\mathbb{R}", "\\C": "\\mathbb{C}", "\\N": "\\mathbb{N}",
  "\\F": "\\mathbb{F}", "\\A": "\\mathbb{A}", "\\RR": "\\mathbb{R}", "\\Qp": "\\mathbb{Q}_p", "\\O": "\\mathcal{O}",
  "\\norm": "\\left\\lVert #1\\right\\rVert", "\\abs": "\\left\\lvert #1\\right\\rvert", "\\mc": "\\mathcal{#1}",
  "\\fr": "\\mathfrak{#1}", "\\sma": "\\mathfrak{a}", "\\smb": "\\mathfrak{b}", "\\smm": "\\mathfrak{m}", "\\smp": "\\mathfrak{p}", "\\ol": "\\overline{#1}", "\\Log": "\\operatorname{Log}",
};

const MATH_ENVS = "equation|equation\\*|align|align\\*|alignat|alignat\\*|gather|gather\\*|multline|multline\\*|" +
                  "eqnarray|eqnarray\\*|displaymath|CD|xymatrix";
// $$..$$, \[..\], \(..\), math environments, $..$ (an escaped \$ is text)
const MATH = new RegExp(
  "\\$\\$([\\s\\S]+?)\\$\\$|\\\\\\[([\\s\\S]+?)\\\\\\]|\\\\\\(([\\s\\S]+?)\\\\\\)|" +
  "(\\\\begin\\{(" + MATH_ENVS + ")\\}[\\s\\S]+?\\\\end\\{\\5\\})|(?<!\\\\)\\$((?:\\\\\\$|[^$])+?)\\$", "g");

function esc(s) {
  return s.replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

// Text-mode LaTeX, escaped, with the few structures statements use turned into HTML.
const ACCENTS = {'"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "c": "\u0327", "v": "\u030c"};

function plainText(t) {
  return t.replace(/(^|[^\\])%.*$/gm, "$1")                                   // comments
          .replace(/\\([\"'`^~]|[cv](?=\{|\s))\s*\{?([A-Za-z])\}?/g, (m, a, l) => (l + ACCENTS[a]).normalize("NFC"))
          .replace(/\\PMlinkescape(?:word|phrase)\{[^}]*\}/g, "")
          .replace(/\\PMlinkescapetext\{([^}]*)\}/g, "$1")
          .replace(/\\PMlink(?:name|id|external|tofile)\{([^}]*)\}\{[^}]*\}/g, "$1")
          .replace(/\\begin\{thebibliography\}\{[^}]*\}/g, "\n\nReferences:")
          .replace(/\\bibitem(?:\[[^\]]*\])?\{([^}]*)\}/g, "\n[$1] ")
          .replace(/\\\$/g, "$").replace(/\\%/g, "%").replace(/\\&/g, "&").replace(/\\_/g, "_");
}

function textToHtml(t) {
  let h = esc(plainText(t));
  h = h.replace(/\s*\\label\{[^}]*\}\s*/g, " ")
       .replace(/\\(?:eq)?ref\{([^}]*)\}/g, "($1)")
       .replace(/\\cite(?:\[[^\]]*\])?\{([^}]*)\}/g, "[$1]")
       .replace(/\\begin\{enumerate\}(\[[^\]]*\])?/g, "<ol>").replace(/\\end\{enumerate\}/g, "</ol>")
       .replace(/\\begin\{itemize\}/g, "<ul>").replace(/\\end\{itemize\}/g, "</ul>")
       .replace(/\\begin\{description\}/g, "<ul>").replace(/\\end\{description\}/g, "</ul>")
       .replace(/\\item(?:\[([^\]]*)\])?/g, (m, lab) => "<li>" + (lab ? "<strong>" + lab + "</strong> " : ""))
       .replace(/\\(?:emph|textit|textsl)\{([^{}]*)\}/g, "<em>$1</em>")
       .replace(/\{\\(?:em|it|sl)\s+([^{}]*)\}/g, "<em>$1</em>").replace(/\{\\bf\s+([^{}]*)\}/g, "<strong>$1</strong>")
       .replace(/\\textbf\{([^{}]*)\}/g, "<strong>$1</strong>")
       .replace(/\\(?:texttt|verb)\{([^{}]*)\}/g, "<code>$1</code>")
       .replace(/\\(?:text|textrm|mbox|textup)\{([^{}]*)\}/g, "$1")
       .replace(/``/g, "“").replace(/&#39;&#39;/g, "”").replace(/---/g, "—").replace(/--/g, "–")
       .replace(/\\\\/g, "<br>").replace(/~/g, "&nbsp;")
       .replace(/\\(?:noindent|medskip|smallskip|bigskip|par|newline|hfill|quad|qquad)\b/g, " ")
       .replace(/\\begin\{[a-zA-Z*]+\}|\\end\{[a-zA-Z*]+\}/g, "")
       .replace(/\n\s*\n/g, "<br><br>")
       .replace(/(<(?:li|ol|ul)>(?:<strong>[^<]*<\/strong>)?)\s*(?:<br>\s*)+/g, "$1")  // no blank line opening an item
       .replace(/\\\{/g, "\u0005").replace(/\\\}/g, "\u0006").replace(/[{}]/g, "")   // grouping braces go
       .replace(/\u0005/g, "{").replace(/\u0006/g, "}")
       .replace(/\u0001/g, "<em>").replace(/\u0002/g, "</em>").replace(/\u0003/g, "<strong>").replace(/\u0004/g, "</strong>");
  return h;
}

function mathToHtml(tex, display) {
  if (!window.katex) return "<code>" + esc(tex) + "</code>";
  return katex.renderToString(tex, {displayMode: display, throwOnError: false, strict: "ignore", trust: false,
                                    macros: Object.assign({}, MACROS), maxExpand: 1000, output: "htmlAndMathml"});
}

// {\it ...}, {\em ...}, {\bf ...}, \emph{...}, \textit{...}, \textbf{...} around text that holds math:
// the braces are matched here, on the whole source, and become markers that survive the split
// into text and math (the markers turn into <em>/<strong> in textToHtml).
const STYLE_OPEN = /\{\\(it|em|sl|bf)\s+|\\(emph|textit|textsl|textbf)\{/g;
const MARK = {em: ["\u0001", "\u0002"], strong: ["\u0003", "\u0004"]};

function markStyles(src) {
  let out = "", last = 0, m;
  STYLE_OPEN.lastIndex = 0;
  while ((m = STYLE_OPEN.exec(src))) {
    let depth = 1, i = STYLE_OPEN.lastIndex;
    for (; i < src.length && depth; i++) {
      if (src[i] === "\\") { i++; continue; }
      if (src[i] === "{") depth++; else if (src[i] === "}") depth--;
    }
    if (depth) break;
    const tag = (m[1] || m[2]).includes("bf") ? "strong" : "em";
    out += src.slice(last, m.index) + MARK[tag][0] + src.slice(STYLE_OPEN.lastIndex, i - 1) + MARK[tag][1];
    last = STYLE_OPEN.lastIndex = i;
  }
  return out + src.slice(last);
}

// A statement as its source writes it (LaTeX) -> HTML with rendered math; no $ delimiter survives.
function texToHtml(src) {
  src = markStyles(src || "");
  let out = "", last = 0;
  for (const m of (src || "").matchAll(MATH)) {
    out += textToHtml(src.slice(last, m.index));
    if (m[1] !== undefined) out += mathToHtml(m[1], true);
    else if (m[2] !== undefined) out += mathToHtml(m[2], true);
    else if (m[3] !== undefined) out += mathToHtml(m[3], false);
    else if (m[4] !== undefined) out += mathToHtml(m[4], true);
    else out += mathToHtml(m[6], false);
    last = m.index + m[0].length;
  }
  return out + textToHtml((src || "").slice(last));
}

// A Lean docstring (Markdown with $math$ and `code`).
function docstringToHtml(src) {
  return texToHtml(src || "").replace(/`([^`<]+)`/g, "<code>$1</code>");
}

// ----------------------------------------------------------------------------- small helpers

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "html") e.innerHTML = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

function badge(source) { return el("span", {class: "badge", "data-source": source, text: source}); }

function docHref(id, bundle) {
  return "/doc/" + encodeURIComponent(id).replace(/%3A/gi, ":") + (bundle ? "?bundle=" + encodeURIComponent(bundle) : "");
}

function setStatus(text, isError) {
  const s = document.getElementById("status");
  s.textContent = text;
  s.classList.toggle("error", !!isError);
}

function ranksText(ranks) {
  return Object.entries(ranks || {}).filter(([, r]) => r !== null && r !== undefined).map(([c, r]) => `${c} #${r}`).join(" · ");
}

// ----------------------------------------------------------------------------- the search page

let BUNDLES = null;
const DOC_CACHE = new Map();

function formState() {
  const f = {q: document.getElementById("q").value.trim(), corpus: document.getElementById("corpus").value,
             mode: document.getElementById("mode").value, kind: document.getElementById("kind").value.trim(),
             bundle: document.getElementById("bundle").value || "", module: document.getElementById("module").value.trim(),
             source: [...document.querySelectorAll("#sources input:checked")].map((c) => c.value)};
  return f;
}

function stateToUrl(f) {
  const u = new URLSearchParams();
  if (f.q) u.set("q", f.q);
  if (f.corpus && f.corpus !== "informal") u.set("corpus", f.corpus);
  if (f.mode && f.mode !== "hybrid") u.set("mode", f.mode);
  if (f.kind) u.set("kind", f.kind);
  if (f.module && f.corpus === "lean") u.set("module", f.module);
  if (f.bundle && f.corpus !== "lean") u.set("bundle", f.bundle);
  if (f.corpus !== "lean") for (const s of f.source) u.append("source", s);
  const qs = u.toString();
  return "/" + (qs ? "?" + qs : "");
}

function urlToForm() {
  const u = new URLSearchParams(location.search);
  document.getElementById("q").value = u.get("q") || "";
  document.getElementById("corpus").value = u.get("corpus") === "lean" ? "lean" : "informal";
  document.getElementById("mode").value = ["lexical", "dense"].includes(u.get("mode")) ? u.get("mode") : "hybrid";
  document.getElementById("kind").value = u.get("kind") || "";
  document.getElementById("module").value = u.get("module") || "";
  if (u.get("bundle")) document.getElementById("bundle").value = u.get("bundle");
  const wanted = new Set(u.getAll("source"));
  for (const c of document.querySelectorAll("#sources input")) c.checked = wanted.has(c.value);
  corpusChanged();
  sourcesCount();
}

function corpusChanged() {
  const lean = document.getElementById("corpus").value === "lean";
  document.getElementById("sources-field").hidden = lean;
  document.getElementById("module-field").hidden = !lean;
  document.getElementById("bundle-field").hidden = lean || !BUNDLES || BUNDLES.served.length < 2;
}

function sourcesCount() {
  const n = document.querySelectorAll("#sources input:checked").length;
  document.getElementById("sources-count").textContent = n ? `(${n})` : "(all)";
}

function fillSources() {
  const box = document.getElementById("sources");
  box.textContent = "";
  const label = document.getElementById("bundle").value;
  const b = (BUNDLES.served.find((x) => x.label === label) || BUNDLES.served[0]);
  for (const [name, info] of Object.entries((b && b.sources) || {})) {
    const c = el("input", {type: "checkbox", value: name, name: "source"});
    c.addEventListener("change", sourcesCount);
    box.append(el("label", {}, c, badge(name), el("span", {class: "count", text: (info.count || 0).toLocaleString()})));
  }
}

async function loadBundles() {
  try {
    BUNDLES = await api("/api/bundles");
  } catch (e) {
    BUNDLES = {served: [], formal: {available: false}};
    if (e.status === 401) return;
  }
  const sel = document.getElementById("bundle");
  sel.textContent = "";
  for (const b of BUNDLES.served) if (b.label) sel.append(el("option", {value: b.label, text: b.label}));
  const leanOpt = document.querySelector('#corpus option[value="lean"]');
  if (!BUNDLES.formal.available) { leanOpt.disabled = true; leanOpt.textContent = "Lean declarations (no formal bundle)"; }
  fillSources();
}

function hitCard(h, i, bundle, lean) {
  const ranks = ranksText(h.ranks);
  const title = lean ? h.name : (h.name || h.title || h.id);
  const a = el("a", {href: docHref(h.id, lean ? null : bundle), class: "open", "data-index": i, text: title});
  const meta = el("div", {class: "meta"}, badge(lean ? "lean" : h.source), el("span", {class: "kind", text: h.kind}),
                  el("code", {text: h.id}));
  if (lean && h.module) meta.append(el("span", {text: h.module}));
  if (!lean && h.title && h.title !== title) meta.append(el("span", {text: h.title}));
  if (h.link) meta.append(el("a", {class: "out", href: h.link, target: "_blank", rel: "noopener noreferrer",
                                   title: "open at the source", text: "source ↗"}));
  meta.append(el("span", {class: "ranks", text: ranks}));
  const li = el("li", {class: "hit", title: ranks ? "channel ranks: " + ranks : null}, el("h3", {}, a), meta);
  if (lean) {
    if (h.signature) li.append(el("pre", {class: "lean", text: h.signature}));
    if (h.docstring) li.append(el("div", {class: "docstring", html: docstringToHtml(h.docstring)}));
  } else {
    const body = el("div", {class: "statement snippet", text: h.text});
    li.append(body);
    loadBody(h.id, bundle, body);
  }
  return li;
}

async function loadBody(id, bundle, target) {
  const key = bundle + "|" + id;
  try {
    if (!DOC_CACHE.has(key)) DOC_CACHE.set(key, api("/api/doc/" + encodeURIComponent(id), {bundle}));
    const d = await DOC_CACHE.get(key);
    if (d.body && d.body.trim()) {
      target.innerHTML = texToHtml(d.body);
      target.classList.remove("snippet");
      target.classList.add("rendered");
      if (target.scrollHeight > target.clientHeight + 4) target.classList.add("long");
    }
  } catch (e) { DOC_CACHE.delete(key); /* keep the snippet */ }
}

let SEQ = 0;

async function runSearch() {
  const f = formState();
  const list = document.getElementById("results");
  if (!f.q) { list.textContent = ""; setStatus(""); return; }
  const seq = ++SEQ;
  setStatus("searching…");
  const t0 = performance.now();
  try {
    let r;
    if (f.corpus === "lean") {
      r = await api("/api/lean/search", {q: f.q, mode: f.mode, kind: f.kind, module: f.module, k: 20});
    } else {
      r = await api("/api/search", {q: f.q, mode: f.mode, kind: f.kind, source: f.source, bundle: f.bundle, k: 20});
    }
    if (seq !== SEQ) return;
    list.textContent = "";
    r.hits.forEach((h, i) => list.append(hitCard(h, i, r.bundle, f.corpus === "lean")));
    const ms = Math.round(performance.now() - t0);
    setStatus(r.hits.length ? `${r.hits.length} results from ${r.bundle} (${r.mode}) in ${ms} ms`
                            : `no results in ${r.bundle}` + (f.source.length || f.kind ? " with these filters" : ""));
    document.title = f.q + " — mathlas";
  } catch (e) {
    if (seq !== SEQ) return;
    list.textContent = "";
    setStatus(e.message, true);
  }
}

function submit(ev) {
  if (ev) ev.preventDefault();
  const url = stateToUrl(formState());
  if (url !== location.pathname + location.search) history.pushState(null, "", url);
  runSearch();
}

function focusHit(i) {
  const links = [...document.querySelectorAll("#results a.open")];
  if (!links.length) return;
  const j = Math.max(0, Math.min(links.length - 1, i));
  links[j].focus();
  links[j].scrollIntoView({block: "nearest"});
}

function keyboard(ev) {
  const links = [...document.querySelectorAll("#results a.open")];
  const at = links.indexOf(document.activeElement);
  const q = document.getElementById("q");
  if (ev.key === "/" && document.activeElement !== q && !(ev.target instanceof HTMLInputElement)) {
    ev.preventDefault(); q.focus(); q.select(); return;
  }
  if (ev.key === "ArrowDown" && (at >= 0 || document.activeElement === q)) { ev.preventDefault(); focusHit(at + 1); }
  else if (ev.key === "ArrowUp" && at >= 0) { ev.preventDefault(); if (at === 0) q.focus(); else focusHit(at - 1); }
  else if (ev.key === "Escape" && at >= 0) { q.focus(); }
}

async function startSearchPage() {
  document.getElementById("search").addEventListener("submit", submit);  // before anything is awaited
  await loadBundles();
  urlToForm();
  for (const id of ["mode", "corpus", "bundle"]) {
    document.getElementById(id).addEventListener("change", () => {
      if (id === "bundle") fillSources();
      corpusChanged();
      if (document.getElementById("q").value.trim()) submit();
    });
  }
  document.getElementById("kind").addEventListener("change", () => { if (document.getElementById("q").value.trim()) submit(); });
  document.getElementById("sources-field").addEventListener("toggle", (e) => {
    if (!e.target.open && document.getElementById("q").value.trim()) submit();
  });
  window.addEventListener("popstate", () => { urlToForm(); runSearch(); });
  document.addEventListener("keydown", keyboard);
  if (document.getElementById("q").value.trim()) runSearch();
  document.body.dataset.ready = "true";  // the form is filled from the URL: typing now is kept
}

// ----------------------------------------------------------------------------- the document page

function field(dl, name, value) {
  if (value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length)) return;
  dl.append(el("dt", {text: name}), el("dd", {}, value instanceof Node ? value : document.createTextNode(
    Array.isArray(value) ? value.join(", ") : String(value))));
}

function idLinks(ids, bundle) {
  const ul = el("ul");
  for (const id of ids) ul.append(el("li", {}, el("a", {href: docHref(id, bundle), text: id})));
  return ul;
}

async function loadDeps(id, direction) {
  const list = document.getElementById("deps");
  const status = document.getElementById("deps-status");
  for (const b of document.querySelectorAll(".deps-head .tab")) b.setAttribute("aria-pressed", String(b.dataset.direction === direction));
  document.getElementById("deps-title").textContent = direction === "uses" ? "Uses" : "Used by";
  status.textContent = "loading…";
  list.textContent = "";
  try {
    const r = await api("/api/lean/deps/" + encodeURIComponent(id), {direction, depth: 1, limit: 200});
    for (const d of r.declarations) {
      list.append(el("li", {}, el("a", {href: docHref(d.id), class: "dep", text: d.id.replace(/^lean:/, "")}), " ",
                     el("span", {class: "kind", text: d.kind}), " ", el("span", {class: "module", text: d.module})));
    }
    status.textContent = r.total ? `${r.total} declaration${r.total === 1 ? "" : "s"}` + (r.truncated ? ` (first ${r.declarations.length})` : "")
                                 : (direction === "uses" ? "uses no other declaration of this bundle" : "no declaration uses it");
  } catch (e) { status.textContent = e.message; }
}

async function startDocPage() {
  const id = decodeURIComponent(location.pathname.replace(/^\/doc\//, ""));
  const bundle = new URLSearchParams(location.search).get("bundle") || undefined;
  setStatus("loading…");
  let d;
  try {
    d = await api("/api/doc/" + encodeURIComponent(id), {bundle});
  } catch (e) { setStatus(e.message, true); return; }
  setStatus("");
  const lean = d.source === "lean";
  document.title = (d.name || d.id) + " — mathlas";
  const src = document.getElementById("doc-source");
  src.textContent = d.source; src.dataset.source = d.source;
  document.getElementById("doc-kind").textContent = d.kind;
  document.getElementById("doc-id").textContent = d.id;
  document.getElementById("doc-name").textContent = lean ? d.id.replace(/^lean:/, "") : (d.name || d.title || d.id);
  document.getElementById("doc-title").textContent = lean ? (d.fields.module || "") : (d.title || "");
  if (d.slogan) { const s = document.getElementById("doc-slogan"); s.hidden = false; s.innerHTML = texToHtml(d.slogan); }
  const body = document.getElementById("doc-body");
  if (lean) {
    body.hidden = true;
    document.getElementById("doc-lean").hidden = false;
    document.getElementById("doc-signature").textContent = d.fields.signature || d.body;
    document.getElementById("doc-docstring").innerHTML = docstringToHtml(d.fields.docstring || "");
  } else {
    body.innerHTML = texToHtml(d.body);
  }
  const dl = document.getElementById("doc-fields");
  if (d.link) field(dl, "source", el("a", {href: d.link, target: "_blank", rel: "noopener noreferrer", class: "out", text: d.link + " ↗"}));
  field(dl, "license", d.license);
  field(dl, "bundle", d.bundle);
  const f = d.fields || {};
  for (const [k, name] of [["paper_title", "paper"], ["authors", "authors"], ["year", "year"], ["categories", "categories"],
                           ["citations", "citations"], ["journal_ref", "journal"], ["module", "module"], ["generated", "generated by"]]) {
    field(dl, name, f[k]);
  }
  const links = document.getElementById("doc-links");
  const stacks = lean ? String(f.stacks || "").split(/\s+/).filter(Boolean).map((t) => "stacks:" + t) : [];
  if (f.formal && f.formal.length) {
    links.hidden = false;
    links.append(el("h2", {text: "Lean declarations tagged with this statement"}), idLinks(f.formal));
  }
  if (stacks.length) {
    links.hidden = false;
    links.append(el("h2", {text: "Stacks Project"}), idLinks(stacks));
  }
  document.getElementById("doc").hidden = false;
  if (lean) {
    document.getElementById("doc-deps").hidden = false;
    for (const b of document.querySelectorAll(".deps-head .tab")) b.onclick = () => loadDeps(d.id, b.dataset.direction);
    loadDeps(d.id, "uses");
  }
}

// ----------------------------------------------------------------------------- start

function start() {
  if (document.body.dataset.page === "doc") startDocPage(); else startSearchPage();
}

document.addEventListener("DOMContentLoaded", start);
