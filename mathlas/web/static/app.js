// mathlas search page and document page. Plain JavaScript, no build step; KaTeX renders the math.
"use strict";

// ----------------------------------------------------------------------------- the API

const TOKEN_KEY = "mathlas-token";
// What a 401 says to a person with the token box in front of them (the API's own line speaks of headers)
const TOKEN_NEEDED = "This server needs a token: paste it in the token box above and press Use token "
  + "(whoever runs the server can give it to you).";
const TOKEN_WRONG = "That token was not accepted: check it and paste it again, or ask whoever runs the server for the right one.";
let LOCKED = false;  // the server refused the page for want of a token: the filters it serves are not known yet

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
  if (r.status === 401) {
    LOCKED = true;
    showToken(Boolean(token));
    throw new ApiError(401, token ? TOKEN_WRONG : TOKEN_NEEDED);
  }
  if (!r.ok) throw new ApiError(r.status, (body && body.error) || r.statusText);
  LOCKED = false;
  return body;
}

// The token box, shown when the server asks for a token; a token it refused stays in the box, selected,
// so it can be corrected or replaced.
function showToken(refused) {
  const box = document.getElementById("token-box");
  if (!box) return;
  const input = document.getElementById("token");
  if (box.hidden) {
    box.hidden = false;
    if (refused) { input.value = localStorage.getItem(TOKEN_KEY) || ""; input.select(); } else input.focus();
  }
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
  "\\leftrightarroweq": "\\mathrel{\\underline{\\leftrightarrow}}",  // bisimilarity (Open Logic; a package symbol)
  "\\L": "\\text{Ł}", "\\l": "\\text{ł}",  // LaTeX's Polish letters, which PlanetMath's names use in math too
  "\\comp": "\\complement", "\\sp": "^", "\\sb": "_",  // PlanetMath's complement; plain TeX's scripts
  "\\ref": "\\text{(#1)}", "\\eqref": "\\text{(#1)}", "\\fr": "\\mathfrak{#1}", "\\sma": "\\mathfrak{a}", "\\smb": "\\mathfrak{b}", "\\smm": "\\mathfrak{m}", "\\smp": "\\mathfrak{p}", "\\ol": "\\overline{#1}", "\\Log": "\\operatorname{Log}",
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

// What an older build left of a macro definition it did not remove (PlanetMath's `\newcommand{\K}[0]{K}`
// in an entry's body became "[0]{K}"): lines made only of such pieces.
const DEFINITION_DEBRIS = /^[ \t]*(?:\[\d\]\{(?:[^{}\n]|\{(?:[^{}\n]|\{[^{}\n]*\})*\})*\}[ \t]*)+$\n?/gm;

// TeX's spacing commands in prose (PlanetMath writes "Let\, $x$\, be" and "\textbf{Theorem.}\;" in some
// 1,100 statements of the default bundle): \, a thin space that stays with what follows, \; \: \> wider
// spaces, \! none. They are TeX's own, so the page reads them rather than the build dropping them.
const TEXT_SPACES = {",": "\u202f", ";": "\u2004", ":": "\u2005", ">": "\u2005", "!": ""};

function plainText(t) {
  return t.replace(/(^|[^\\])%.*$/gm, "$1")                                   // comments
          .replace(/(^|[^\\])\\[ \n]/g, "$1 ").replace(/(^|[^\\])\\@/g, "$1")  // control space: "i.e.\ ", "G.\ L.\ Naber"
          .replace(/\\\\|\\([,;:>!])/g, (m, c) => (c === undefined ? m : TEXT_SPACES[c]))  // \\ (a line break) is kept
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
       .replace(/\{\s*\\(?:em|it|sl)\s+([^{}]*)\}/g, "<em>$1</em>").replace(/\{\s*\\bf\s+([^{}]*)\}/g, "<strong>$1</strong>")
       .replace(/\{\s*\\tt\s+([^{}]*)\}/g, "<code>$1</code>")
       .replace(/\{\s*\\(?:rm|sf|sc|up|normalfont|small|large|Large|footnotesize)\s+([^{}]*)\}/g, "$1")
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
  if (tex.includes("\\xymatrix")) tex = xymatrices(tex.replace(/\\(?:begin|end)\{xy\}/g, ""));
  // A statement never defines macros: a bare # is the symbol (Metamath's set size, `# ` A`), and
  // \^ without its group the caret Metamath writes in `..^` (half-open ranges).
  tex = tex.replace(/(^|[^\\])#(?![0-9])/g, "$1\\#").replace(/\\\^(?![{A-Za-z])/g, "\\hat{}")
           .replace(/\\text\{\s*(\\[A-Za-z]+)\s*\}/g, "\\mathrm{$1}")   // \text{\iota}: a symbol, upright
           // \rm{Poly} (Metamath): the old switch given a group, which KaTeX would apply to the rest of the formula
           .replace(/\\(rm|bf|it|sf|tt|cal)\s*\{/g, (m, f) => ({rm: "\\mathrm{", bf: "\\mathbf{", it: "\\mathit{",
                                                           sf: "\\mathsf{", tt: "\\mathtt{", cal: "\\mathcal{"})[f]);
  if (tex.includes("\\mathchoice")) tex = mathchoices(tex);
  if (tex.includes("\\DisplayProof") || tex.includes("\\AxiomC")) tex = proofTrees(tex);
  return katex.renderToString(tex, {displayMode: display, throwOnError: false, strict: "ignore", trust: false,
                                    macros: Object.assign({}, MACROS), maxExpand: 1000, output: "htmlAndMathml"});
}

// \mathchoice{D}{T}{S}{SS} as its display-style choice (KaTeX refuses the HoTT book's, whose choices
// hold \raisebox with math inside).
function mathchoices(tex) {
  let out = "", i = 0;
  for (;;) {
    const at = tex.indexOf("\\mathchoice", i);
    if (at < 0) return out + tex.slice(i);
    let j = at + 11;
    while (tex[j] === " ") j++;
    const args = [];
    while (args.length < 4 && tex[j] === "{") {
      const end = balanced(tex, j);
      if (end < 0) break;
      args.push(tex.slice(j + 1, end));
      j = end + 1;
      while (tex[j] === " ") j++;
    }
    if (args.length < 4) return out + tex.slice(i);
    out += tex.slice(i, at) + "{" + args[0].replace(/\\raisebox\{[^{}]*\}\{\$([^$]*)\$\}/g, "{$1}") + "}";
    i = j;
  }
}

// bussproofs (Open Logic's rules and derivations: \AxiomC{A} \AxiomC{B} \RightLabel{R} \BinaryInfC{C}
// \DisplayProof) as the tree it draws: each inference a fraction over its premises, its label beside
// the line. KaTeX has no bussproofs.
const INFERENCES = {UnaryInfC: 1, BinaryInfC: 2, TrinaryInfC: 3, QuaternaryInfC: 4, QuinaryInfC: 5};

function proofTrees(tex) {
  const cmd = /\\(AxiomC|AXC|UnaryInfC|UIC|BinaryInfC|BIC|TrinaryInfC|TIC|QuaternaryInfC|QuinaryInfC|RightLabel|RL|LeftLabel|LL|DisplayProof|noLine|singleLine|doubleLine|dashedLine|alwaysNoLine|alwaysSingleLine)\b\s*/g;
  const alias = {AXC: "AxiomC", UIC: "UnaryInfC", BIC: "BinaryInfC", TIC: "TrinaryInfC", RL: "RightLabel", LL: "LeftLabel"};
  const arg = (t) => t.replace(/^\s*\$([\s\S]*)\$\s*$/, "$1").replace(/\$([^$]*)\$/g, "$1");  // the argument is text with math in it
  let out = "", last = 0, stack = [], right = "", left = "", line = true, m, start = -1;
  cmd.lastIndex = 0;
  while ((m = cmd.exec(tex))) {
    const name = alias[m[1]] || m[1];
    if (start < 0) { out += tex.slice(last, m.index); start = m.index; }
    let a = "";
    if (["AxiomC", "RightLabel", "LeftLabel"].includes(name) || INFERENCES[name]) {
      const open = cmd.lastIndex;
      const end = tex[open] === "{" ? balanced(tex, open) : -1;
      if (end < 0) return tex;  // not bussproofs as expected: left for KaTeX to say so
      a = arg(tex.slice(open + 1, end));
      cmd.lastIndex = end + 1;
    }
    if (name === "AxiomC") stack.push(a);
    else if (name === "RightLabel") right = a;
    else if (name === "LeftLabel") left = a;
    else if (name === "noLine") line = false;
    else if (INFERENCES[name]) {
      const n = Math.min(INFERENCES[name], stack.length);
      const premises = stack.splice(stack.length - n, n).join(" \\qquad ");
      const tree = line ? `\\dfrac{${premises}}{${a}}` : `\\begin{gathered}${premises}\\\\ ${a}\\end{gathered}`;
      stack.push((left ? `\\scriptsize{${left}}\\,` : "") + tree + (right ? `\\,{\\scriptsize ${right}}` : ""));
      right = left = ""; line = true;
    } else if (name === "DisplayProof") {
      out += stack.join(" \\qquad ");
      stack = []; start = -1;
    }
    last = cmd.lastIndex;
  }
  return out + (stack.length ? stack.join(" \\qquad ") : "") + tex.slice(last);
}

// ----------------------------------------------------------------------------- xymatrix diagrams

// KaTeX has no xymatrix (Stacks and PlanetMath draw their diagrams with it: 1,517 documents of the
// 1.1 default bundle). A diagram becomes an array with its objects on the even rows and columns and
// each arrow in the gap it leaves from: horizontal arrows extensible with their labels, vertical ones
// with the label at the side xy-pic puts it, diagonals as the slanted arrows. An arrow that spans
// several cells fills each gap of a straight run; a bent one is drawn by its first step.

function balanced(s, open) {  // s[open] === "{": the index of its closing brace (-1: none)
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    if (s[i] === "\\") { i++; continue; }
    if (s[i] === "{") depth++;
    else if (s[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

function splitTop(s, sep) {  // split at a separator outside braces ("&" or "\\\\")
  const out = [];
  let depth = 0, last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\\" && !s.startsWith(sep, i)) { i++; continue; }
    if (c === "{") depth++;
    else if (c === "}") depth--;
    else if (depth === 0 && s.startsWith(sep, i)) { out.push(s.slice(last, i)); last = i + sep.length; i += sep.length - 1; }
  }
  out.push(s.slice(last));
  return out;
}

// One label after ^ or _ (or |): a braced group, a command with its letters, or one character.
function readLabel(s, i) {
  while (s[i] === " ") i++;
  if (s[i] === "{") { const j = balanced(s, i); return j < 0 ? [s.slice(i + 1), s.length] : [s.slice(i + 1, j), j + 1]; }
  if (s[i] === "\\") { const m = /^\\([A-Za-z]+|.)/.exec(s.slice(i)); return [m[0], i + m[0].length]; }
  return [s[i] || "", i + 1];
}

// The arrows of one cell (`\ar@{style}[dir]^{a}_{b}`, and 2-cells such as `\rtwocell^F_G{t}`) and
// what is left: the object.
const ARROW = /\\ar(?![A-Za-z])|\\([udlr]+)(upper|lower)?(?:two|compos)cell(?![A-Za-z])/g;

function cellArrows(cell) {
  const arrows = [];
  let object = "", i = 0, m;
  ARROW.lastIndex = 0;
  while ((m = ARROW.exec(cell))) {
    object += cell.slice(i, m.index);
    i = m.index + m[0].length;
    let style = m[1] ? "2cell" : "->", dir = m[1] || "";
    const labels = {above: "", below: "", middle: ""};
    for (;;) {
      while (cell[i] === " " || cell[i] === "\n") i++;
      if (cell[i] === "@") {
        i++;
        if (cell[i] === "{") { const j = balanced(cell, i); style = j < 0 ? style : cell.slice(i + 1, j); i = j < 0 ? i + 1 : j + 1; }
        else if (cell[i] === "/") { const j = cell.indexOf("/", i + 1); i = j < 0 ? i + 1 : j + 1; }  // curving: ignored
        else if (/[=\-.:^_<>]/.test(cell[i] || "")) { style = cell[i]; i++; }
      } else if (cell[i] === "[" && !m[1]) {
        const j = cell.indexOf("]", i); dir = cell.slice(i + 1, j < 0 ? cell.length : j).replace(/[^udlr]/g, ""); i = j < 0 ? cell.length : j + 1;
      } else if (cell[i] === "<" && m[1]) {  // a 2-cell's curvature <10>
        const j = cell.indexOf(">", i); i = j < 0 ? i + 1 : j + 1;
      } else if (cell[i] === "^" || cell[i] === "_" || cell[i] === "|") {
        const side = cell[i] === "^" ? "above" : (cell[i] === "_" ? "below" : "middle");
        let k = i + 1;
        for (;;) {  // where along the arrow: ^-, ^<<, ^(.3)
          if (cell[k] === "-" || cell[k] === "<" || cell[k] === ">") k++;
          else if (cell[k] === "(") { const j = cell.indexOf(")", k); k = j < 0 ? k + 1 : j + 1; }
          else if (cell[k] === "!" && cell[k + 1] === "{") { const j = balanced(cell, k + 1); k = j < 0 ? k + 1 : j + 1; }
          else break;
        }
        const [lab, next] = readLabel(cell, k);
        if (lab.trim() !== "\\hole") labels[side] = lab;  // |\hole: a gap where arrows cross
        i = next;
      } else if (cell[i] === "{" && m[1]) {  // the 2-cell's own label
        const j = balanced(cell, i); labels.middle = cell.slice(i + 1, j < 0 ? cell.length : j).replace(/^[\^_]/, "");
        i = j < 0 ? cell.length : j + 1;
      } else break;
    }
    if (dir) arrows.push({dir, style, labels});
    ARROW.lastIndex = i;
  }
  object += cell.slice(i);
  return [object.trim(), arrows];
}

function horizontal(a, right) {
  const up = a.labels[right ? "above" : "below"], down = a.labels[right ? "below" : "above"];
  if (a.style === "2cell") {  // two parallel arrows and the 2-morphism between them
    const t = a.labels.middle.trim();
    return `\\underset{${down}}{\\overset{${up}}{\\rightrightarrows}}` + (t ? `{\\scriptstyle\\Downarrow ${t}}` : "");
  }
  if (!a.style) return a.labels.middle || up || down ? `{\\scriptstyle ${a.labels.middle || up || down}}` : "";  // @{}: a label, no arrow
  const dashed = /\.|--/.test(a.style), hook = /\^\{?\(|\(\}?->/.test(a.style) || a.style.includes("hook");
  const name = /^=+$/.test(a.style) ? "xlongequal"
             : /->>|>>/.test(a.style) ? (right ? "xtwoheadrightarrow" : "xtwoheadleftarrow")
             : hook ? (right ? "xhookrightarrow" : "xhookleftarrow") : (right ? "xrightarrow" : "xleftarrow");
  if (dashed && !up && !down) return right ? "\\dashrightarrow" : "\\dashleftarrow";
  return `\\${name}` + (down ? `[{${down}}]` : "") + `{${up}}`;
}

function vertical(a, down) {
  const left = a.labels[down ? "below" : "above"], right = a.labels[down ? "above" : "below"];
  if (!a.style) return a.labels.middle || left || right ? `{\\scriptstyle ${a.labels.middle || left || right}}` : "";
  if (a.style === "2cell") return `{\\scriptstyle ${left}}\\Big\\Downarrow{\\scriptstyle ${a.labels.middle || right}}`;
  const arrow = /^=+$/.test(a.style) ? "\\Big\\Vert" : (down ? "\\Big\\downarrow" : "\\Big\\uparrow");
  return (left ? `{\\scriptstyle ${left}}` : "") + arrow + (right ? `{\\scriptstyle ${right}}` : "");
}

const DIAGONAL = {dr: "\\searrow", rd: "\\searrow", dl: "\\swarrow", ld: "\\swarrow", ur: "\\nearrow", ru: "\\nearrow",
                  ul: "\\nwarrow", lu: "\\nwarrow"};

function xymatrixToArray(body) {
  body = body.replace(/(^|[^\\])%.*$/gm, "$1")  // comments: a line joined to the next would lose it
             .replace(/\\(?:save|restore)(?![A-Za-z])/g, "");  // xy-pic's position stack: the objects stay
  const rows = splitTop(body, "\\\\").map((r) => splitTop(r, "&"));
  while (rows.length > 1 && rows[rows.length - 1].every((c) => !c.trim())) rows.pop();
  const R = rows.length, C = Math.max(...rows.map((r) => r.length));
  const grid = Array.from({length: 2 * R - 1}, () => Array(2 * C - 1).fill(""));
  const put = (y, x, s) => { if (y >= 0 && x >= 0 && y < 2 * R - 1 && x < 2 * C - 1) grid[y][x] = grid[y][x] ? grid[y][x] + "\\;" + s : s; };
  rows.forEach((row, i) => row.forEach((cell, j) => {
    const [object, arrows] = cellArrows(cell);
    put(2 * i, 2 * j, object.replace(/^\*[+!\-=]*(?:<[^>]*>|\[[^\]]*\])*/, "")    // *+<10pt> frames and spacing
                            .replace(/\\(?:txt|makebox(?:\[[^\]]*\])*)\s*\{/g, "{").replace(/\$/g, ""));
    for (const a of arrows) {
      const dy = (a.dir.match(/d/g) || []).length - (a.dir.match(/u/g) || []).length;
      const dx = (a.dir.match(/r/g) || []).length - (a.dir.match(/l/g) || []).length;
      if (!dx && !dy) continue;
      if (!dy) {
        for (let s = 0; s < Math.abs(dx); s++) put(2 * i, 2 * (j + Math.sign(dx) * s) + Math.sign(dx), s ? (dx > 0 ? "\\longrightarrow" : "\\longleftarrow") : horizontal(a, dx > 0));
      } else if (!dx) {
        for (let s = 0; s < Math.abs(dy); s++) put(2 * (i + Math.sign(dy) * s) + Math.sign(dy), 2 * j, s ? vertical({labels: {above: "", below: ""}, style: a.style}, dy > 0) : vertical(a, dy > 0));
      } else {
        const key = (dy > 0 ? "d" : "u") + (dx > 0 ? "r" : "l");
        const lab = a.labels.middle || a.labels.above || a.labels.below;
        const arrow = !a.style ? "" : (a.style === "2cell" ? "\\Downarrow" : DIAGONAL[key]);  // @{}: the label alone
        put(2 * i + Math.sign(dy), 2 * j + Math.sign(dx), arrow + (lab ? `{\\scriptstyle ${lab}}` : ""));
      }
    }
  }));
  return "\\begin{array}{" + "c".repeat(2 * C - 1) + "}" + grid.map((r) => r.join(" & ")).join(" \\\\[0.4em] ") + "\\end{array}";
}

// Every \xymatrix{...} (with its @ spacing options) of a formula as an array.
function xymatrices(tex) {
  let out = "", i = 0;
  for (;;) {
    const at = tex.indexOf("\\xymatrix", i);
    if (at < 0) return out + tex.slice(i);
    let j = at + 9;
    while (j < tex.length && tex[j] !== "{") j++;  // @C=3pc@R-1em, @1 ...
    const end = j < tex.length ? balanced(tex, j) : -1;
    if (end < 0) return out + tex.slice(i);
    out += tex.slice(i, at) + xymatrixToArray(tex.slice(j + 1, end));
    i = end + 1;
  }
}

// {\it ...}, {\em ...}, {\bf ...}, \emph{...}, \textit{...}, \textbf{...} around text that holds math:
// the braces are matched here, on the whole source, and become markers that survive the split
// into text and math (the markers turn into <em>/<strong> in textToHtml).
const STYLE_OPEN = /\{\s*\\(it|em|sl|bf)(?![A-Za-z])\s*|\\(emph|textit|textsl|textbf)\{/g;
const MARK = {em: ["\u0001", "\u0002"], strong: ["\u0003", "\u0004"]};

function markStyles(src) {
  let out = "", last = 0, m;
  // inside math a \textit{Alg} is KaTeX's to draw (the display build expands \Alg to it): left alone
  const math = [...src.matchAll(MATH)].map((x) => [x.index, x.index + x[0].length]);
  const inMath = (at) => math.some(([a, b]) => a <= at && at < b);
  STYLE_OPEN.lastIndex = 0;
  while ((m = STYLE_OPEN.exec(src))) {
    if (inMath(m.index)) continue;
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

const URL_ONLY = /^\s*(?:https?:\/\/|www\.)[^\s$]+\s*$/;

// A statement as its source writes it (LaTeX) -> HTML with rendered math; no $ delimiter survives.
function texToHtml(src) {
  src = markStyles((src || "").replace(DEFINITION_DEBRIS, ""));
  let out = "", last = 0;
  for (const m of (src || "").matchAll(MATH)) {
    out += textToHtml(src.slice(last, m.index));
    if (m[1] !== undefined) out += mathToHtml(m[1], true);
    else if (m[2] !== undefined) out += mathToHtml(m[2], true);
    else if (m[3] !== undefined) out += mathToHtml(m[3], false);
    else if (m[4] !== undefined) out += mathToHtml(m[4], true);
    else if (URL_ONLY.test(m[6])) out += esc(m[6].trim());  // an address an author put between dollars
    else out += mathToHtml(m[6], false);
    last = m.index + m[0].length;
  }
  return out + textToHtml((src || "").slice(last));
}

// A Lean docstring: Markdown (paragraphs, **bold**, *emphasis*, `code`, [links](https://...), headings,
// bullets) with $math$. Code and math are cut out first, so that nothing in them reads as Markdown;
// the rest is escaped, then marked up. Only http(s) links become links.
function docstringToHtml(src) {
  const held = [];
  const hold = (html) => { held.push(html); return `\u0007${held.length - 1}\u0007`; };
  let s = (src || "").replace(/\r\n?/g, "\n");
  s = s.replace(/```[^\n]*\n([\s\S]*?)```/g, (m, code) => hold(`<pre class="lean">${esc(code.replace(/\n$/, ""))}</pre>`))
       .replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (m, ticks, code) => hold(`<code>${esc(code.trim())}</code>`))
       .replace(/\$\$([\s\S]+?)\$\$|(?<![\\$])\$((?:\\\$|[^$\n])+?)\$/g,
                (m, display, inline) => hold(mathToHtml(display !== undefined ? display : inline, display !== undefined)));
  s = esc(s)
    .replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s()]+(?:\([^\s()]*\))?[^\s()]*)\)/g,
             (m, text, url) => `<a href="${url}" target="_blank" rel="noopener noreferrer">${text}</a>`)
    .replace(/(\*\*|__)(?=\S)([\s\S]+?)(?<=\S)\1/g, "<strong>$2</strong>")
    .replace(/(^|[^\w*\\])([*_])(?=[^\s*_])([^*_\n]+?)(?<=\S)\2(?![\w*])/g, "$1<em>$3</em>")
    .replace(/\\([*_`#\[\]])/g, "$1");
  const blocks = s.split(/\n\s*\n/).map((b) => b.trim()).filter(Boolean).map((b) => {
    const head = b.match(/^#{1,6}\s+(.*)$/);
    if (head && !b.includes("\n")) return `<p><strong>${head[1]}</strong></p>`;
    if (/^\s*[*+-]\s+/.test(b)) {
      return "<ul>" + b.split(/\n(?=\s*[*+-]\s+)/).map((li) => `<li>${li.replace(/^\s*[*+-]\s+/, "")}</li>`).join("") + "</ul>";
    }
    return /^\u0007\d+\u0007$/.test(b) && held[+b.slice(1, -1)].startsWith("<pre") ? b : `<p>${b}</p>`;
  });
  return blocks.join("").replace(/\u0007(\d+)\u0007/g, (m, k) => held[+k]);
}

// ----------------------------------------------------------------------------- small helpers

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "html") e.innerHTML = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
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

function plural(n, one, many) { return `${Number(n || 0).toLocaleString()} ${n === 1 ? one : (many || one + "s")}`; }

// The heading a person reads and the context beside it: the hit's or document's own `heading` and
// `context` (mathlas.headings.describe, the same on every surface), never recomputed here.
function headings(d) {
  const head = (d.heading || "").trim() || d.id;
  const context = (d.context || "").trim();
  return [head, context && context !== head ? context : ""];
}

// A ProofWiki heading made from the statement's first sentence, with its formulas: on the page it is
// drawn from the statement's own TeX (KaTeX), where the text surfaces give it in Unicode. The sentence
// is the one the build took (after the "Let ..." set-up, "Then" dropped); null when the statement has
// no such sentence or the sentence has no math.
const SETUP = /^(?:Let|Suppose|Assume|Consider|Define|Denote|Fix|Given|Write)\b/;

function texHeading(d) {
  if (d.source !== "proofwiki" || (d.name || "").trim() || !d.body || !d.body.includes("$")) return null;
  const body = d.body.replace(/\s+/g, " ").trim();
  const math = [...body.matchAll(MATH)].map((x) => [x.index, x.index + x[0].length]);
  const inMath = (at) => math.some(([a, b]) => a <= at && at < b);
  const sentences = [];
  let from = 0;
  for (const m of body.matchAll(/[.;!?:](?=\s+[A-Z($\\])/g)) {
    if (inMath(m.index)) continue;
    sentences.push(body.slice(from, m.index + 1).trim());
    from = m.index + 1;
  }
  sentences.push(body.slice(from).trim());
  const pick = sentences.map((x) => x.replace(/^(?:Then|Hence|So|Thus)\b[,:]?\s*/, ""))
                        .find((x) => !SETUP.test(x) && x.split(/\s+/).length >= 2);
  if (!pick || !pick.includes("$") || pick.length > 240) return null;
  const text = pick.replace(/\$\$\s*(?:\\displaystyle)?([\s\S]+?)\$\$/g, "$$$1$$").replace(/[\s.:;,]+$/, "");
  return text[0] === "$" ? text : text[0].toUpperCase() + text.slice(1);
}

// The link to the statement at its source, labelled as what it is: a link that searches the source
// (the hit's or document's link_kind "search": ProofWiki's pages are unknown, so its link is ProofWiki's
// own search) says so; fields.link_kind and a ?search= address are read for a server older than link_kind.
const SOURCE_NAMES = {proofwiki: "ProofWiki", planetmath: "PlanetMath", metamath: "Metamath", stacks: "Stacks Project"};

function linkLabel(source, fields, link, kind) {
  const f = fields || {};
  if (f.link_label) return f.link_label;
  const search = kind ? kind === "search" : f.link_kind === "search" || /[?&]search=/.test(link || "");
  if (search) return (SOURCE_NAMES[source] || source) + " search";
  return "";
}

function outLink(link, source, fields, long, kind) {
  const label = linkLabel(source, fields, link, kind);
  return el("a", {class: "out", href: link, target: "_blank", rel: "noopener noreferrer",
                  title: label ? link : "open at the source", text: (label || (long ? link : "source")) + " ↗"});
}

// A Lean declaration as one line: its name and its signature (binders and type).
function leanDeclaration(name, signature) {
  const sig = (signature || "").trim();
  return sig ? name + " " + sig : "";
}

// The names people use for a Lean declaration (its hit's fields.aliases) as one line: the first
// three, each cut to 80 characters, as the CLI shows them (mathlas.hit.known_as); the title has all.
// Corpus text: it goes in as text, never as HTML.
function knownAs(aliases) {
  const all = Array.isArray(aliases) ? aliases.filter(Boolean) : [];
  if (!all.length) return null;
  const cut = (a) => a.length > 80 ? a.slice(0, 80).replace(/\s+\S*$/, "") + " …" : a;
  return el("div", {class: "aka", title: all.join("; "), text: "also known as " + all.slice(0, 3).map(cut).join("; ")});
}

// A deprecated Lean declaration (fields.deprecated: "since 2025-01-01", a message; fields.replaced_by:
// the id to use instead) as one line, the replacement a link; null when it is not deprecated.
function deprecatedLine(f) {
  if (!f || !f.deprecated) return null;
  const note = f.deprecated === "deprecated" ? "" : (f.deprecated.startsWith("since ") ? " " : ": ") + f.deprecated;
  const div = el("div", {class: "deprecated", text: "deprecated" + note});
  if (f.replaced_by) div.append(document.createTextNode(", use "), el("a", {href: docHref(f.replaced_by), text: f.replaced_by}));
  return div;
}

// ----------------------------------------------------------------------------- the search page

let BUNDLES = null;
const DOC_CACHE = new Map();

// Example queries, by the source that answers them well; the page offers those of the served bundle.
const EXAMPLES = [
  ["stacks", "finitely generated module over a local ring with mM = M is zero"],
  ["openlogic", "compactness theorem for first-order logic"],
  ["metamath", "the square root of 2 is irrational"],
  ["proofwiki", "sum of the angles of a triangle"],
  ["hott", "univalence axiom"],
  ["planetmath", "every bounded monotone sequence converges"],
  ["napkin", "Sylow theorems"],
  ["proofnet", "a finite integral domain is a field"],
  ["arxiv", "spectral gap of random regular graphs"],
];
const LEAN_EXAMPLE = "a prime number is at least two";

function formState() {
  return {q: document.getElementById("q").value.trim(), corpus: document.getElementById("corpus").value,
          mode: document.getElementById("mode").value, kind: document.getElementById("kind").value,
          bundle: document.getElementById("bundle").value || "", module: document.getElementById("module").value.trim(),
          source: [...document.querySelectorAll("#sources input:checked")].map((c) => c.value)};
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
  setMode(u.get("mode") || "hybrid");
  document.getElementById("module").value = u.get("module") || "";
  // the bundle by label, name or spec (a shared URL may say "papers"); none: the default, the first
  const asked = u.get("bundle");
  const served = (BUNDLES.served || []).filter((b) => b.label);
  const b = asked ? served.find((x) => [x.label, x.name, x.spec, `${x.name}@${x.version}`].includes(asked)) : served[0];
  const sel = document.getElementById("bundle");
  if (b) sel.value = b.label;
  else if (asked) {  // not served: sent as asked, so the server's refusal names what is served
    if (![...sel.options].some((o) => o.value === asked)) sel.append(el("option", {value: asked, text: `${asked} (not served)`}));
    sel.value = asked;
  }
  fillSources(u.getAll("source"));
  fillKinds(u.get("kind") || "");
  corpusChanged();
  sourcesCount();
}

function servedBundle() {
  const label = document.getElementById("bundle").value;
  return (BUNDLES.served.find((x) => x.label === label) || BUNDLES.served[0]) || {};
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

// The source boxes offer the sources of the bundle searched. `wanted` (a URL's sources): each is
// ticked, in any case (`Stacks` is stacks, as POST /search reads it); one the bundle does not have
// (a shared URL, a typo) gets a box of its own, ticked, so it is sent and the server says so.
// Without `wanted` the boxes ticked now stay ticked where the bundle has them.
function fillSources(wanted) {
  const box = document.getElementById("sources");
  const sources = Object.entries(servedBundle().sources || {});
  const byCase = new Map(sources.map(([name]) => [name.toLowerCase(), name]));
  const keep = new Set(wanted ? wanted.map((w) => byCase.get(w.toLowerCase()) || w)
                              : [...box.querySelectorAll("input:checked")].map((c) => c.value));
  box.textContent = "";
  const add = (name, note) => {
    const c = el("input", {type: "checkbox", value: name, name: "source"});
    c.checked = keep.has(name);
    c.addEventListener("change", () => { sourcesCount(); filterChanged(); });  // a filter applies as it changes
    box.append(el("label", {}, c, badge(name), el("span", {class: "count", text: note})));
  };
  for (const [name, info] of sources) add(name, (info.count || 0).toLocaleString());
  for (const name of keep) if (wanted && !Object.hasOwn(servedBundle().sources || {}, name)) add(name, "not in this bundle");
  if (LOCKED && !sources.length) box.append(el("p", {class: "note", text: "The sources show once the token is accepted."}));
}

// The mode field: hybrid, lexical or dense; another (a shared URL's `mode=fuzzy`) stays selected, so
// it is sent and the server's refusal names the modes.
function setMode(mode) {
  const sel = document.getElementById("mode");
  for (const o of [...sel.options]) if (o.dataset.unknown) o.remove();
  if (![...sel.options].some((o) => o.value === mode)) {
    sel.append(el("option", {value: mode, text: `${mode} (not a mode)`, "data-unknown": "true"}));
  }
  sel.value = mode;
}

// The kind field offers the kinds of the bundle searched (with their counts); a kind the bundle does
// not have (a shared URL, a typo) stays selected so the server says so.
function fillKinds(wanted, dropUnknown) {
  const sel = document.getElementById("kind");
  const lean = document.getElementById("corpus").value === "lean";
  const kinds = (lean ? (BUNDLES.formal || {}).kinds : servedBundle().kinds) || {};
  sel.textContent = "";
  sel.append(el("option", {value: "", text: "any"}));
  for (const [k, n] of Object.entries(kinds)) sel.append(el("option", {value: k, text: `${k} (${n.toLocaleString()})`}));
  if (wanted && !Object.hasOwn(kinds, wanted) && dropUnknown) wanted = "";  // another bundle chosen: its own kinds only
  if (wanted && !Object.hasOwn(kinds, wanted)) sel.append(el("option", {value: wanted, text: `${wanted} (not in this bundle)`}));
  if (LOCKED) sel.append(el("option", {value: "", disabled: true, text: "(after the token)"}));
  sel.value = wanted || "";
}

async function loadBundles() {
  try {
    BUNDLES = await api("/api/bundles");
  } catch (e) {
    BUNDLES = {served: [], formal: {available: false}};
    if (e.status === 401) { setStatus(e.message, true); return; }
  }
  const sel = document.getElementById("bundle");
  sel.textContent = "";
  for (const b of BUNDLES.served) if (b.label) sel.append(el("option", {value: b.label, text: b.label}));
  const leanOpt = document.querySelector('#corpus option[value="lean"]');
  if (!BUNDLES.formal.available) { leanOpt.disabled = true; leanOpt.textContent = "Lean declarations (no formal bundle)"; }
  fillSources();
  fillKinds("");
  fillAbout();
}

// The landing part: what this server searches (bundles, sources with counts and licences) and a
// few queries to start from.
function exampleLink(q, corpus) {
  const href = stateToUrl({q, corpus, source: []});
  const a = el("a", {href, class: "example", "data-corpus": corpus, text: q});
  a.addEventListener("click", (ev) => {
    ev.preventDefault();
    document.getElementById("corpus").value = corpus;
    corpusChanged();
    fillKinds("");
    for (const c of document.querySelectorAll("#sources input")) c.checked = false;
    sourcesCount();
    document.getElementById("q").value = q;
    submit();
  });
  return a;
}

function fillAbout() {
  const examples = document.getElementById("examples");
  const indexed = document.getElementById("indexed");
  examples.textContent = "";
  indexed.textContent = "";
  const have = new Set(BUNDLES.served.flatMap((b) => Object.keys(b.sources || {})));
  for (const [source, q] of EXAMPLES.filter(([s]) => have.has(s)).slice(0, 5)) {
    examples.append(el("li", {}, exampleLink(q, "informal"), " ", badge(source)));
  }
  if (BUNDLES.formal.available) examples.append(el("li", {}, exampleLink(LEAN_EXAMPLE, "lean"), " ", badge("lean")));
  for (const b of BUNDLES.served) {
    if (!b.label) {
      indexed.append(el("p", {class: "status error", text: b.error || "a bundle could not be read"}));
      continue;
    }
    const table = el("table", {class: "sources"},
                     el("thead", {}, el("tr", {}, el("th", {text: "source"}), el("th", {class: "num", text: "statements"}),
                                         el("th", {text: "licence"}))));
    const body = el("tbody");
    for (const [name, info] of Object.entries(b.sources || {})) {
      body.append(el("tr", {title: info.attribution || null}, el("td", {}, badge(name)),
                     el("td", {class: "num", text: (info.count || 0).toLocaleString()}), el("td", {text: info.license || "?"})));
    }
    table.append(body);
    indexed.append(el("div", {class: "bundle", "data-bundle": b.label},
                      el("h3", {}, el("code", {text: b.label}), " · " + plural(b.count, "statement") + (b.default ? " · default" : "")),
                      b.description ? el("p", {class: "muted", text: b.description}) : null, table));
  }
  const f = BUNDLES.formal;
  if (f.available) {
    indexed.append(el("div", {class: "bundle", "data-bundle": f.label},
                      el("h3", {}, el("code", {text: f.label}), " · " + plural(f.count, "Lean declaration")),
                      el("p", {class: "muted", text: "Choose “Lean declarations” to search it."})));
  } else if (f.how_to_build) {
    // how_to_build is a clause ("whoever runs this server can ..."): what the server's operator can do
    indexed.append(el("p", {class: "muted", text: "No Lean bundle is served; " + f.how_to_build + "."}));
  }
}

// Where else a hit's fact is stated (h.also_in: {source, label, id}, mathlas.groups) as one line:
// "also in PlanetMath FundamentalTheoremOfAlgebra, Metamath fta": the copies mathlas.groups.shown_copies
// names (dealt one a source at a time, two a source and six in all), the rest of a source counted
// ("Mathlib a / b +5"), as the CLI's line; each copy links to its document: this bundle's, and a Lean
// declaration's when the server has a formal bundle. null when the fact is stated nowhere else.
const ALSO_IN_PER_SOURCE = 2, ALSO_IN_LIMIT = 6;
function alsoIn(copies, bundle, lean) {
  if (!Array.isArray(copies) || !copies.length) return null;
  const bySource = new Map();
  copies.forEach(c => { if (!bySource.has(c.source)) bySource.set(c.source, []); bySource.get(c.source).push(c); });
  const room = new Map([...bySource.keys()].map(s => [s, 0]));
  let left = ALSO_IN_LIMIT;
  for (let turn = 0; turn < ALSO_IN_PER_SOURCE; turn++) {
    bySource.forEach((group, source) => {
      if (left > 0 && group.length > turn) { room.set(source, room.get(source) + 1); left--; }
    });
  }
  const formal = !!(BUNDLES && BUNDLES.formal && BUNDLES.formal.available);
  const div = el("div", {class: "also-in", text: "also in "});
  let n = 0;
  bySource.forEach((group, source) => {
    if (n++) div.append(", ");
    const shown = group.slice(0, room.get(source)), rest = group.slice(room.get(source));
    if (!shown.length) div.append(source);
    shown.forEach((c, i) => {
      const isLean = c.id.startsWith("lean:");
      const linked = lean ? isLean : (!isLean || formal);
      const label = c.label ? el("code", {text: c.label}) : null;
      const what = linked ? el("a", {href: docHref(c.id, lean || isLean ? null : bundle), title: c.id})
                          : el("span", {title: c.id});
      if (!i) what.append(source + (label ? " " : ""));
      if (label) what.append(label);
      if (i) div.append(" / ");
      div.append(what);
    });
    if (rest.length) {
      div.append(el("span", {class: "muted", text: ` +${rest.length}`, title: rest.map(c => c.id).join(", ")}));
    }
  });
  return div;
}

function hitCard(h, i, bundle, lean, position) {
  const f = h.fields || {};
  const ranks = ranksText(h.ranks);
  const [head, second] = headings(h);
  const a = el("a", {href: docHref(h.id, lean ? null : bundle), class: "open", "data-index": i, text: head});
  const meta = el("div", {class: "meta"}, badge(lean ? "lean" : h.source), el("span", {class: "kind", text: h.kind}),
                  el("code", {text: h.id}));
  if (second) meta.append(el("span", {class: "second", text: second}));
  if (h.link) meta.append(outLink(h.link, h.source, f, false, h.link_kind));
  // Why a hit with no channel rank is here: the statement-first rule put it above its proof.
  let why = "";
  if (f.statement_of) {
    const n = position.get(f.statement_of);
    why = n ? `statement of #${n}` : `statement of ${f.statement_of}`;
    meta.append(el("span", {class: "why", text: why}));
  }
  if (ranks) meta.append(el("span", {class: "ranks", text: ranks}));
  const li = el("li", {class: "hit", title: ranks ? "channel ranks: " + ranks : (why || null)}, el("h3", {}, a), meta);
  const also = alsoIn(h.also_in, bundle, lean);
  if (also) li.append(also);
  if (lean) {
    const decl = leanDeclaration(h.label || h.id.replace(/^lean:/, ""), f.signature);
    const aka = knownAs(f.aliases);
    if (aka) li.append(aka);
    const dep = deprecatedLine(f);
    if (dep) { li.append(dep); li.classList.add("is-deprecated"); }
    if (decl) li.append(el("pre", {class: "lean", text: decl}));
    if (f.docstring) li.append(el("div", {class: "docstring", html: docstringToHtml(f.docstring)}));
    if (!decl && !f.docstring && h.text) li.append(el("div", {class: "snippet", text: h.text}));
  } else {
    const body = el("div", {class: "statement snippet", text: h.text});
    li.append(body);
    loadBody(h.id, bundle, body, li);
  }
  return li;
}

// The card's statement as its source writes it, from the document (a hit carries a snippet of the
// retrieval text); the document's fields also say what the source link is (a search, for ProofWiki).
async function loadBody(id, bundle, target, card) {
  const key = bundle + "|" + id;
  try {
    if (!DOC_CACHE.has(key)) DOC_CACHE.set(key, api("/api/doc/" + encodeURIComponent(id), {bundle}));
    const d = await DOC_CACHE.get(key);
    const out = card && card.querySelector(".meta a.out");
    const label = linkLabel(d.source, d.fields, d.link, d.link_kind);
    if (out && label) { out.textContent = label + " ↗"; out.title = out.href; }
    const tex = texHeading(d);
    const open = card && card.querySelector("a.open");
    if (tex && open) { open.innerHTML = texToHtml(tex); open.title = d.heading; }
    if (d.body && d.body.trim()) {
      target.innerHTML = texToHtml(d.body);
      target.classList.remove("snippet");
      target.classList.add("rendered");
      if (target.scrollHeight > target.clientHeight + 4) target.classList.add("long");
    }
  } catch (e) { DOC_CACHE.delete(key); /* keep the snippet */ }
  target.dataset.loaded = "true";
}

// What to try when a search finds nothing: each way out is a link that searches again.
function suggest(f) {
  const box = document.getElementById("suggest");
  box.textContent = "";
  const tries = [];
  const again = (label, change) => {
    const g = Object.assign({}, f, change);
    const a = el("a", {href: stateToUrl(g), text: label});
    a.addEventListener("click", (ev) => { ev.preventDefault(); history.pushState(null, "", stateToUrl(g)); urlToForm(); runSearch(); });
    tries.push(a);
  };
  if (f.source.length && f.corpus !== "lean") again("search every source", {source: []});
  if (f.kind) again("any kind", {kind: ""});
  if (f.module && f.corpus === "lean") again("every module", {module: ""});
  if (f.mode !== "hybrid") again("hybrid mode (keywords and meaning)", {mode: "hybrid"});
  if (f.q.split(/\s+/).length > 6) again("fewer words", {q: f.q.split(/\s+/).slice(0, 4).join(" ")});
  if (f.corpus === "lean") again("informal statements", {corpus: "informal", module: ""});
  else if (BUNDLES.formal.available) again("Lean declarations", {corpus: "lean", source: []});
  box.append("Try: ");
  tries.forEach((a, j) => { if (j) box.append(" · "); box.append(a); });
  if (!tries.length) box.append("other words: a theorem's name, what it says in plain words, or a formula.");
  box.hidden = false;
}

let SEQ = 0;

async function runSearch() {
  const f = formState();
  const list = document.getElementById("results");
  const about = document.getElementById("about");
  document.getElementById("suggest").hidden = true;
  document.getElementById("match").hidden = true;
  if (!f.q) {
    list.textContent = "";
    about.hidden = !BUNDLES || !BUNDLES.served.length;  // nothing to say before a token is given
    if (LOCKED) setStatus(localStorage.getItem(TOKEN_KEY) ? TOKEN_WRONG : TOKEN_NEEDED, true);
    else setStatus("");
    document.title = "mathlas — search known mathematics";
    return;
  }
  about.hidden = true;
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
    const position = new Map(r.hits.map((h, i) => [h.id, i + 1]));
    r.hits.forEach((h, i) => list.append(hitCard(h, i, r.bundle, f.corpus === "lean", position)));
    const ms = Math.round(performance.now() - t0);
    const match = document.getElementById("match");
    const judged = Boolean(r.hits.length && r.match);  // every answer with hits says how sure it is
    match.hidden = !(judged || r.expanded);
    match.className = judged ? `match match-${r.match}` : "match";
    match.dataset.match = judged ? r.match : "";
    match.textContent = "";
    if (judged) {  // how far to trust the hits: the answer's own note, said once, then match and confidence
      // a strong answer has no note: the line mathlas.render.STRONG_NOTE says on the CLI and over MCP
      const fallback = {none: "nothing close was found", weak: "likely among these hits, but not sure",
                        strong: "a clear match: most likely the first hit"}[r.match] || "";
      const note = (r.note || fallback).trim();
      match.textContent = note[0].toUpperCase() + note.slice(1).replace(/\.$/, "")
        + ` (match: ${r.match}, confidence ${Number(r.confidence).toFixed(2)}).`;
    }
    if (r.expanded) {  // what the query was searched as: "searched for: ..." (misspellings corrected, mathlas.ranking.names),
      // "also searched as a name: ..." (Lean name words), "expanded CRT: ..." (abbreviations), joined by "; "
      const said = r.expanded[0].toUpperCase() + r.expanded.slice(1);
      match.textContent = (match.textContent ? match.textContent + " · " : "") + `${said}.`;
    }
    if (r.hits.length) {
      setStatus(`${r.hits.length} results from ${r.bundle} (${r.mode}) in ${ms} ms`);
    } else {
      const filters = [f.source.length && f.corpus !== "lean" ? "source " + f.source.join(", ") : "",
                       f.kind ? "kind " + f.kind : "", f.module && f.corpus === "lean" ? "module " + f.module : "",
                       f.mode !== "hybrid" ? f.mode + " mode" : ""].filter(Boolean);
      setStatus(`No results for “${f.q}” in ${r.bundle}` + (filters.length ? ` with ${filters.join(", ")}.` : "."));
      suggest(f);
    }
    document.title = f.q + " — mathlas";
  } catch (e) {
    if (seq !== SEQ) return;
    list.textContent = "";
    setStatus(e.message, true);
  }
}

function submit(ev) {
  if (ev) ev.preventDefault();
  const f = formState();
  const url = stateToUrl(f);
  if (url !== location.pathname + location.search) history.pushState(null, "", url);
  if (!f.q && ev) {  // Enter in an empty box: say what to type
    runSearch();
    setStatus("Type a query first: a theorem's name, what it says in plain words, or a formula. Or start from an example below.");
    return;
  }
  runSearch();
}

// A filter changed: search again at once when there is a query (the URL follows).
function filterChanged() {
  if (document.getElementById("q").value.trim()) submit();
  else history.replaceState(null, "", stateToUrl(formState()));
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

let BOUND = false;  // the listeners, bound once (start() runs again after a token is entered)

async function startSearchPage() {
  const first = !BOUND;
  BOUND = true;
  if (first) document.getElementById("search").addEventListener("submit", submit);  // before anything is awaited
  await loadBundles();
  urlToForm();
  if (first) bindSearchPage();
  runSearch();
  document.body.dataset.ready = "true";  // the form is filled from the URL: typing now is kept
}

function bindSearchPage() {
  document.getElementById("corpus").addEventListener("change", () => { corpusChanged(); fillKinds(""); filterChanged(); });
  document.getElementById("bundle").addEventListener("change", () => {
    fillSources(); fillKinds(document.getElementById("kind").value, true); sourcesCount(); filterChanged();
  });
  for (const id of ["mode", "kind", "module"]) document.getElementById(id).addEventListener("change", filterChanged);
  window.addEventListener("popstate", () => { urlToForm(); runSearch(); });
  document.addEventListener("keydown", keyboard);
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

// One direction of a declaration's dependencies (the page shows both at once).
async function loadDeps(id, direction) {
  const list = document.getElementById("deps-" + direction);
  const status = document.getElementById(`deps-${direction}-status`);
  const count = document.getElementById(`deps-${direction}-count`);
  status.textContent = "loading…";
  status.hidden = false;
  list.textContent = "";
  try {
    const r = await api("/api/lean/deps/" + encodeURIComponent(id), {direction, depth: 1, limit: 200});
    for (const d of r.declarations) {
      list.append(el("li", {}, el("a", {href: docHref(d.id), class: "dep", text: d.id.replace(/^lean:/, "")}), " ",
                     el("span", {class: "kind", text: d.kind}), " ", el("span", {class: "module", text: d.module})));
    }
    count.textContent = `(${r.total})`;
    status.textContent = r.total ? (r.truncated ? `the first ${r.declarations.length} of ${r.total}` : "")
                                 : (direction === "uses" ? "uses no other declaration of this bundle" : "no declaration of this bundle uses it");
  } catch (e) { status.textContent = e.message; status.classList.add("error"); }
  status.hidden = !status.textContent;
}

// Whether the body already says what the slogan says, as `mathlas show` decides (mathlas.render.restates):
// the slogan is in it, letters and digits compared (TeX command names left out); or its first paragraph,
// each formula standing for any words, opens the slogan (Metamath's slogan is its comment with the math
// read out as words, which its body shows typeset).
function restates(body, slogan) {
  const squash = (t) => (t || "").replace(/\\[a-zA-Z]+/g, " ").toLowerCase().replace(/[^a-z0-9]+/g, "");
  const said = squash(slogan);
  if (!said || squash(body).includes(said)) return true;
  const first = (body || "").trim().split(/\n[ \t]*\n/)[0];
  const pieces = first.replace(MATH, "\u0000").split("\u0000").map(squash).filter((x) => x);
  if (pieces.reduce((n, x) => n + x.length, 0) < 8) return false;
  const math = "[\\s\\S]{0,200}?";
  const lead = new RegExp("^(?:" + MATH.source + ")").test(first) ? math : "";
  const escape = (x) => x.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp("^" + lead + pieces.map(escape).join(math)).test(said);
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
  const f = d.fields || {};
  const [head, second] = headings(d);
  document.title = head + " — mathlas";
  const src = document.getElementById("doc-source");
  src.textContent = d.source; src.dataset.source = d.source;
  document.getElementById("doc-kind").textContent = d.kind;
  document.getElementById("doc-id").textContent = d.id;
  const tex = texHeading(d);
  if (tex) document.getElementById("doc-name").innerHTML = texToHtml(tex);
  else document.getElementById("doc-name").textContent = head;
  document.getElementById("doc-title").textContent = second || "";
  if (d.slogan && !restates(d.body, d.slogan)) {
    const s = document.getElementById("doc-slogan"); s.hidden = false; s.innerHTML = texToHtml(d.slogan);
  }
  const body = document.getElementById("doc-body");
  if (lean) {
    body.hidden = true;
    document.getElementById("doc-lean").hidden = false;
    // the declaration as its source writes it (attributes, keyword, binders, type); else name + signature
    document.getElementById("doc-signature").textContent = (d.body || "").trim() || leanDeclaration(head, f.signature);
    document.getElementById("doc-docstring").innerHTML = docstringToHtml(f.docstring || "");
  } else {
    body.innerHTML = texToHtml(d.body);
  }
  const dl = document.getElementById("doc-fields");
  if (d.link) field(dl, "source", outLink(d.link, d.source, f, true, d.link_kind));
  if (d.label && !d.id.endsWith(d.label)) field(dl, "label", d.label);
  field(dl, "license", d.license);
  field(dl, "bundle", d.bundle);
  for (const [k, name] of [["paper_title", "paper"], ["authors", "authors"], ["year", "year"], ["categories", "categories"],
                           ["citations", "citations"], ["journal_ref", "journal"], ["module", "module"],
                           ["generated", "generated by"], ["aliases", "also known as"]]) {
    field(dl, name, f[k]);
  }
  if (f.deprecated) field(dl, "deprecated", deprecatedLine(f));
  if (f.alias_of) field(dl, "alias of", el("a", {href: docHref(f.alias_of), text: f.alias_of}));
  if (f.formula) field(dl, "formula", el("code", {class: "formula", text: f.formula}));  // Metamath's own ASCII
  const links = document.getElementById("doc-links");
  const tags = Array.isArray(f.stacks) ? f.stacks : String(f.stacks || "").split(/\s+/);
  const stacks = lean ? tags.filter(Boolean).map((t) => "stacks:" + t) : [];
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
    loadDeps(d.id, "uses");
    loadDeps(d.id, "used_by");
  }
}

// ----------------------------------------------------------------------------- start

function start() {
  if (document.body.dataset.page === "doc") startDocPage(); else startSearchPage();
}

document.addEventListener("DOMContentLoaded", start);
