// sparsetir explorer: renders the document the page carries (sparsetir/explorer/document.py).
// Every line of every pane knows the script lines it came from ("origins"); hovering or clicking
// a line lights up, in every pane, the lines that share its most specific origin.
// Uses Layout (layout.js), Share (share.js) and, in a served page, SparsetirEditor (editor.js).
"use strict";
(function () {
  const KINDS = { script: "Script", stage1: "Stage I", stage2: "Stage II", stage3: "Stage III", code: "Code", diff: "Diff" };
  const CODE_NAMES = { ll: "LLVM IR", asm: "assembly", cuda: "CUDA" };
  // What a step's diff compares: the program at the step's stage, or what it became downstream.
  const DIFF_OF = { program: "its program", stage3: "stage III", code: "generated code" };
  // Successive hues of the script lines' colours differ by the golden angle, so that no two
  // lines of a function share one and neighbouring lines differ most.
  const GOLDEN_ANGLE = 137.508;

  const state = {
    doc: JSON.parse(document.getElementById("explorer-data").textContent),
    view: 0,                                 // which point of the schedule history is shown
    kinds: ["script", "stage2", "stage3"],   // what each pane shows
    count: 3,                                // how many panes are side by side
    sizes: null,                             // the panes' shares of the row (dragged)
    side: null,                              // the side bar's width in px (dragged)
    wrap: false,                             // long lines wrap
    diff: null,                              // {kind: "pass" | "step", index}: what the diff pane shows
    diffOf: "program",                       // a step's diff: of its program, of stage III, of the code
    pinned: null,                            // origins of the clicked line
    editing: false,
    draft: null,                             // the script text being edited
    problem: null,                           // the located error of the last compile
  };
  // Who this page is to the server: a newer compile of the same client cancels the older one.
  const client = window.crypto && crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2);
  let index = { byOrigin: new Map(), script: [] };   // script line -> rows showing something from it
  let lit = [];
  let colours = colourMap(state.doc);
  let editor = null;     // the CodeMirror editor while the script is edited ({host, api})
  let pending = null;    // the AbortController of the compile in flight

  const $ = (id) => document.getElementById(id);
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }
  const primary = (origins) => (origins.length ? Math.max(...origins) : 0);
  const view = () => state.doc.views[state.view];
  const pane = (id) => state.doc.panes[id];

  /** The colour of every script line something came from, distinct within the document's function. */
  function colourMap(doc) {
    const lines = new Set();
    for (const [id, p] of Object.entries(doc.panes)) {
      if (id !== doc.script) for (const origins of p.origins) for (const n of origins) lines.add(n);
    }
    const sorted = [...lines].sort((a, b) => a - b);
    return new Map(sorted.map((n, k) => [n, `hsl(${((k * GOLDEN_ANGLE) % 360).toFixed(1)} 80% ${k % 2 ? 87 : 91}%)`]));
  }

  function tint(row, line) {
    const colour = colours.get(line);
    if (!colour) return;
    row.style.setProperty("--tint", colour);
    row.classList.add("tinted");
  }

  // ---- what a pane shows -------------------------------------------------------------------

  function content(kind) {
    const doc = state.doc;
    if (kind === "script") return { title: doc.file || "script", pane: pane(doc.script) };
    if (kind === "diff") return diffContent();
    if (!view()) return { title: KINDS[kind], pane: { lines: [], origins: [], note: doc.steps_error || "Nothing to show." } };
    if (kind === "code") return { title: `${CODE_NAMES[doc.code_format] || "code"} for ${doc.target}`, pane: pane(view().code) };
    return { title: KINDS[kind], pane: pane(view()[kind]) };
  }

  function diffContent() {
    const d = state.diff;
    if (d && d.kind === "pass" && view() && view().passes[d.index]) {
      const p = view().passes[d.index];
      return { title: `after pass ${p.name} (stage ${p.stages[0]} \u2192 ${p.stages[1]})`, diff: p.diff };
    }
    if (d && d.kind === "step" && state.doc.steps[d.index]) {
      const s = state.doc.steps[d.index];
      const rows = state.diffOf === "program" ? s.diff : s[`${state.diffOf}_diff`];
      const what = state.diffOf === "program" ? "" : ` (${DIFF_OF[state.diffOf]})`;
      return { title: `after step ${s.number}: ${s.text}${what}`, diff: rows === undefined ? s.diff : rows, step: true };
    }
    return { title: "Diff", diff: null };
  }

  // ---- rendering -----------------------------------------------------------------------------

  function render() {
    const holder = $("panes");
    const scrolled = Layout.saveScroll(holder);
    index = { byOrigin: new Map(), script: [] };
    lit = [];
    renderTop();
    renderSide();
    const used = usedLines();
    holder.replaceChildren();
    state.sizes = Layout.fit(state.sizes, state.count);
    state.kinds.slice(0, state.count).forEach((kind, i) => {
      if (i) holder.append(Layout.paneHandle(holder, state.sizes, i, saveView));
      const box = renderPane(kind, i, used);
      box.style.flexGrow = String(state.sizes[i]);
      holder.append(box);
    });
    holder.classList.toggle("wrap", state.wrap);
    if (editor) editor.api.view.requestMeasure();  // its element was moved into the new pane
    Layout.restoreScroll(holder, scrolled);
    if (state.pinned) light(state.pinned, "pinned");
    renderStatus();
    saveView();
  }

  function usedLines() {
    const used = new Set();
    if (!view()) return used;
    for (const kind of ["stage1", "stage2", "stage3", "code"]) {
      for (const origins of pane(view()[kind]).origins) for (const n of origins) used.add(n);
    }
    return used;
  }

  function renderTop() {
    const doc = state.doc;
    $("title").textContent = doc.title;
    const funcs = $("functions");
    funcs.replaceChildren();
    if (doc.editable && doc.functions.length > 1) {
      const select = el("select", { id: "function-select", title: "function", onchange: (e) => compile(currentScript(), e.target.value) },
        ...doc.functions.map((f) => el("option", { value: f, selected: f === doc.func }, f)));
      funcs.append(select);
    } else if (doc.functions.length > 1) {
      funcs.textContent = `(one of ${doc.functions.length} functions)`;
    }
    const steps = doc.steps.length;
    $("view-label").textContent = state.view === 0 ? (steps ? `before step 1 of ${steps}` : "no schedule steps")
      : `after step ${state.view} of ${steps}: ${doc.steps[state.view - 1].text}`;
    $("prev-step").disabled = state.view === 0;
    $("next-step").disabled = state.view >= doc.views.length - 1;
    $("wrap").classList.toggle("on", state.wrap);
    for (const b of document.querySelectorAll("#pane-count button")) b.classList.toggle("on", Number(b.dataset.count) === state.count);
    if (state.side) $("side").style.width = `${state.side}px`;
  }

  function renderSide() {
    const doc = state.doc;
    const passes = $("passes");
    passes.replaceChildren();
    $("passes-from").textContent = state.view ? `(as of step ${state.view})` : "";
    (view() ? view().passes : []).forEach((p, i) => {
      const item = el("li", { "data-pass": p.name, onclick: () => showDiff({ kind: "pass", index: i }) },
        el("span", { class: "num" }, String(i + 1)), el("span", { class: "what" }, p.name),
        el("span", { class: "badge" }, `${p.stages[0]}\u2192${p.stages[1]} \u00b7 ${p.ms.toFixed(1)} ms`));
      if (state.diff && state.diff.kind === "pass" && state.diff.index === i) item.classList.add("selected");
      passes.append(item);
    });
    if (view() && !view().passes.length) passes.append(el("li", { class: "empty" }, el("span", { class: "what" }, "at stage III: no pass left")));
    const steps = $("steps");
    steps.replaceChildren();
    if (doc.views.length) {
      steps.append(stepItem(0, "before any step", `stage ${doc.start_stage}`));
      doc.steps.forEach((s, i) => steps.append(stepItem(i + 1, s.text, `stage ${s.stage}`)));
    }
    const note = $("steps-note");
    note.textContent = doc.steps_error || doc.steps_note || "";
    note.classList.toggle("bad", Boolean(doc.steps_error));
  }

  function stepItem(number, text, badge) {
    const item = el("li", { "data-step": number, title: text, onclick: () => { if (number) showDiff({ kind: "step", index: number - 1 }, number); else goTo(0, true); } },
      el("span", { class: "num" }, String(number)), el("span", { class: "what" }, text), el("span", { class: "badge" }, badge));
    if (number === state.view) item.classList.add("current");
    if (number && state.diff && state.diff.kind === "step" && state.diff.index === number - 1) item.classList.add("selected");
    return item;
  }

  function renderPane(kind, i, used) {
    const what = content(kind);
    const select = el("select", { class: "kind", title: "what this pane shows", onchange: (e) => { state.kinds[i] = e.target.value; render(); } },
      ...Object.entries(KINDS).map(([k, name]) => el("option", { value: k, selected: k === kind }, name)));
    const header = el("header", {}, select, el("span", { class: "info", title: what.title }, what.title));
    const box = el("section", { class: "pane", "data-kind": kind }, header);
    if (what.step) {
      header.append(el("select", { class: "diff-of", title: "what the step's diff compares", onchange: (e) => { state.diffOf = e.target.value; render(); } },
        ...Object.entries(DIFF_OF).map(([k, name]) => el("option", { value: k, selected: k === state.diffOf }, name))));
    }
    if (kind === "script" && state.doc.editable) {
      if (state.editing) {
        header.append(el("button", { class: "on", id: "compile", title: "compile the edited script (Ctrl+Enter)", onclick: () => compile(currentScript(), state.doc.func) }, "Compile"),
          el("button", { id: "cancel-edit", onclick: stopEditing }, "Cancel"));
        box.append(renderEditor());
        return box;
      }
      header.append(el("button", { id: "edit", title: "edit the script and compile it again", onclick: () => startEditing() }, "Edit"));
    }
    const body = el("div", { class: "body", tabindex: "0" });  // focusable: arrow keys scroll it
    box.append(body);
    if (what.diff !== undefined) renderDiff(body, what.diff);
    else renderLines(body, what.pane, kind === "script" ? used : null);
    return box;
  }

  function renderLines(body, p, used) {
    if (p.note && !p.lines.length) {
      body.append(el("p", { class: "note" + (/failed/.test(p.note) ? " bad" : "") }, p.note));
      return;
    }
    const rows = el("div", { class: "rows hl" });
    const lines = state.doc.lines;
    p.lines.forEach((id, i) => rows.append(lineRow(i + 1, lines[id], p.origins[i], used)));
    body.append(rows);
  }

  function lineRow(number, html, origins, used, op) {
    const row = el("div", { class: "row", "data-origins": origins.join(",") });
    if (op !== undefined) row.append(el("span", { class: "op" }, op === " " ? "" : op));
    else row.append(el("span", { class: "lineno" }, String(number)));
    const code = el("code");
    code.innerHTML = html;
    row.append(code);
    if (used) {  // a script line: shaded when something in the other panes came from it
      if (used.has(number)) tint(row, number);
      index.script[number] = row;
    } else if (origins.length) {
      tint(row, primary(origins));
      for (const n of origins) {
        if (!index.byOrigin.has(n)) index.byOrigin.set(n, []);
        index.byOrigin.get(n).push(row);
      }
    }
    return row;
  }

  function renderDiff(body, rows) {
    if (rows === null && state.diff && state.diff.kind === "step") {
      body.append(el("p", { class: "note bad" }, "Lowering failed on one side of this step: there is nothing to compare."));
      return;
    }
    if (!rows) {
      body.append(el("p", { class: "note" }, "Pick a pass or a schedule step to see what it changed."));
      return;
    }
    if (!rows.length) {
      body.append(el("p", { class: "note" }, "No change in the printed program."));
      return;
    }
    const box = el("div", { class: "rows hl" });
    for (const [op, line, origins] of rows) {
      if (op === "@") { box.append(el("div", { class: "row hunk" }, el("span", { class: "op" }, ""), el("code", {}, line))); continue; }
      const row = lineRow(0, state.doc.lines[line], origins, null, op);
      if (op === "+") row.classList.add("add");
      if (op === "-") row.classList.add("del");
      box.append(row);
    }
    body.append(box);
  }

  function renderStatus(message, bad) {
    const status = $("status");
    const doc = state.doc;
    const error = view() && view().error;
    status.classList.toggle("bad", Boolean(bad || error));
    status.textContent = message || (error ? `Lowering failed: ${error}`
      : `${doc.file || "script"} \u00b7 ${doc.func} \u00b7 target ${doc.target} \u00b7 ${doc.steps.length} schedule step${doc.steps.length === 1 ? "" : "s"}`);
  }

  // ---- linking lines -------------------------------------------------------------------------

  function related(origins) {
    const rows = new Set(index.byOrigin.get(primary(origins)) || []);
    for (const n of origins) if (index.script[n]) rows.add(index.script[n]);
    return rows;
  }

  function light(origins, cls) {
    for (const row of lit) row.classList.remove("hot", "pinned");
    lit = [...related(origins)];
    for (const row of lit) row.classList.add(cls);
    return lit;
  }

  function originsOf(row) {
    const text = row.dataset.origins;
    return text ? text.split(",").map(Number) : [];
  }

  function onHover(event) {
    const row = event.target.closest(".row");
    if (!row || !originsOf(row).length) return;
    const origins = originsOf(row);
    const rows = light(origins, "hot");
    renderStatus(`script line${origins.length > 1 ? "s" : ""} ${origins.join(", ")}: ${rows.length} linked line${rows.length === 1 ? "" : "s"}`);
  }

  function onLeave() {
    if (state.pinned) light(state.pinned, "pinned");
    else light([], "hot");
    renderStatus();
  }

  function onClick(event) {
    const row = event.target.closest(".row");
    if (!row) return;
    const origins = originsOf(row);
    const same = state.pinned && origins.join() === state.pinned.join();
    state.pinned = origins.length && !same ? origins : null;
    saveView();
    if (!state.pinned) { light([], "hot"); return; }
    light(state.pinned, "pinned");
    for (const body of document.querySelectorAll(".pane .body")) {   // bring the linked lines into view
      if (body.contains(row)) continue;
      const first = lit.find((r) => body.contains(r));
      if (first) first.scrollIntoView({ block: "center", inline: "nearest" });
    }
  }

  // ---- navigation ----------------------------------------------------------------------------

  function goTo(number, showStepDiff) {
    if (number < 0 || number >= state.doc.views.length) return;
    state.view = number;
    if (showStepDiff) state.diff = number ? { kind: "step", index: number - 1 } : null;
    else if (state.diff && state.diff.kind === "step") state.diff = number ? { kind: "step", index: number - 1 } : null;
    render();
  }

  function showDiff(what, viewNumber) {
    state.diff = what;
    if (viewNumber !== undefined) state.view = viewNumber;
    if (!state.kinds.slice(0, state.count).includes("diff")) state.kinds[state.count - 1] = "diff";
    render();
  }

  function setWrap(on) {
    state.wrap = on;
    if (editor) editor.api.wrap(on);
    render();
  }

  // ---- the view as a link (share.js) -------------------------------------------------------------

  function linkView() {
    const d = state.diff;
    return {
      step: String(state.view),
      panes: state.kinds.slice(0, state.count).join(","),
      sizes: state.sizes ? state.sizes.map((s) => s.toFixed(3)).join(",") : null,
      side: state.side,
      wrap: state.wrap ? "1" : null,
      diff: d ? `${d.kind}.${d.index}` : null,
      of: d && d.kind === "step" && state.diffOf !== "program" ? state.diffOf : null,
      pin: state.pinned ? state.pinned.join(",") : null,
      func: state.doc.editable ? state.doc.func : null,
      edit: state.editing ? "1" : null,
    };
  }

  function saveView() {
    // A served page's link carries the script (the draft, while editing): whoever opens it gets
    // it compiled. An exported page is its own script.
    const script = state.doc.editable ? currentScript() : undefined;
    Share.update(linkView(), script).catch(() => {});
  }

  /** Show the view `link` holds (Share.read's result): the parts that fit this document. */
  function applyLink(link) {
    const kinds = (link.panes || "").split(",").filter((k) => k in KINDS);
    if (kinds.length >= 2 && kinds.length <= 3) {
      state.count = kinds.length;
      state.kinds = kinds.concat(state.kinds.slice(kinds.length)).slice(0, 3);
    }
    const sizes = (link.sizes || "").split(",").map(Number);
    state.sizes = sizes.length === state.count && sizes.every((s) => s > 0) ? sizes : null;
    state.side = Number(link.side) > 0 ? Number(link.side) : null;
    state.wrap = link.wrap === "1";
    const step = Number(link.step);
    state.view = Number.isInteger(step) && step >= 0 && step < state.doc.views.length ? step : 0;
    const [kind, at] = (link.diff || "").split(".");
    state.diff = (kind === "pass" || kind === "step") && Number.isInteger(Number(at)) && at !== "" ? { kind, index: Number(at) } : null;
    state.diffOf = link.of in DIFF_OF ? link.of : "program";
    const pin = (link.pin || "").split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
    state.pinned = pin.length ? pin : null;
  }

  async function openLink() {
    let link;
    try {
      link = await Share.read(location.hash);
    } catch (err) {
      render();
      renderStatus(`this link's view could not be read: ${err}`, true);
      return;
    }
    if (!link) { render(); return; }
    const differs = link.script !== undefined && (link.script !== state.doc.script_text || (link.func && link.func !== state.doc.func));
    if (differs && state.doc.editable && link.edit) {
      state.editing = true;   // a draft: shown in the editor, not compiled
      state.draft = link.script;
    }
    let compiled = false;
    if (differs && state.doc.editable && !link.edit) {
      render();
      compiled = await compile(link.script, link.func || null);
    }
    applyLink(link);
    render();
    if (compiled) renderStatus(`compiled ${state.doc.func}: the script of this link`);
    if (differs && !state.doc.editable) renderStatus("this link holds an edited script: it opens in the server's explorer (sparsetir explore FILE), not in this exported page", true);
  }

  async function copyLink() {
    saveView();
    await new Promise((resolve) => setTimeout(resolve, 50));  // the fragment is written asynchronously
    try {
      await navigator.clipboard.writeText(location.href);
      renderStatus("a link to this view is copied");
    } catch (err) {
      renderStatus(`the link to this view is the page's address: ${location.href}`);
    }
  }

  // ---- editing (server mode) -----------------------------------------------------------------

  function currentScript() {
    if (editor) return editor.api.text();
    return state.draft !== null ? state.draft : state.doc.script_text;
  }

  function startEditing(text) {
    state.editing = true;
    state.draft = text !== undefined ? text : state.draft !== null ? state.draft : state.doc.script_text;
    render();
    editor.api.focus();
  }

  function stopEditing(draw) {
    state.editing = false;
    state.problem = null;
    state.draft = null;
    if (editor) { editor.api.view.destroy(); editor = null; }
    if (draw !== false) render();
  }

  function renderEditor() {
    if (!editor) {
      const host = el("div", { class: "editor" });
      const api = SparsetirEditor.createEditor(host, {
        text: state.draft, wrap: state.wrap,
        onChange: (text) => { state.draft = text; saveView(); },
        onCompile: () => compile(currentScript(), state.doc.func),
      });
      editor = { host, api };
    }
    const wrap = el("div", { class: "editor-wrap" }, editor.host);
    if (state.problem) {
      const p = state.problem;
      const where = p.line ? el("a", { href: "#", onclick: (e) => { e.preventDefault(); editor.api.showError(p.line, p.col, p.message); } }, `line ${p.line}, column ${p.col}`) : null;
      wrap.append(el("pre", { class: "problem", id: "problem" }, where, where ? "\n" : null, p.rendered || p.message));
      setTimeout(() => { if (editor) editor.api.showError(p.line, p.col, p.message); }, 0);
    }
    return wrap;
  }

  /** Send `script` to the server; true when it compiled. A compile sent before this one and not
   * answered yet is abandoned (the server then stops it). */
  async function compile(script, func) {
    if (pending) pending.abort();
    const mine = pending = new AbortController();
    renderStatus("compiling\u2026");
    let response, data;
    try {
      response = await fetch("api/compile", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ script, func, client }), signal: mine.signal });
      data = await response.json();
    } catch (err) {
      if (mine.signal.aborted) return false;
      renderStatus(`the explorer server did not answer: ${err}`, true);
      return false;
    } finally {
      if (pending === mine) pending = null;
    }
    if (response.ok && data.document) {
      state.doc = data.document;
      colours = colourMap(state.doc);
      state.view = Math.min(state.view, Math.max(0, state.doc.views.length - 1));
      state.pinned = null;
      if (state.diff && state.diff.kind === "step" && !state.doc.steps[state.diff.index]) state.diff = null;
      stopEditing();
      renderStatus(state.doc.func_note ? `compiled ${state.doc.func}: ${state.doc.func_note}` : `compiled ${state.doc.func}`);
      return true;
    }
    if (data.status === "cancelled") return false;  // a newer compile of this page replaced it
    state.problem = data.error || { message: `the server answered ${response.status}` };
    if (editor) state.draft = editor.api.text();
    else state.draft = script;
    state.editing = true;
    render();
    const p = state.problem;
    renderStatus(p.line ? `error at line ${p.line}, column ${p.col}: ${p.message}` : `error: ${p.message}`, true);
    return false;
  }

  // ---- wiring --------------------------------------------------------------------------------

  const panes = $("panes");
  panes.addEventListener("mouseover", onHover);
  panes.addEventListener("mouseleave", onLeave);
  panes.addEventListener("click", onClick);
  $("prev-step").addEventListener("click", () => goTo(state.view - 1, false));
  $("next-step").addEventListener("click", () => goTo(state.view + 1, false));
  $("wrap").addEventListener("click", () => setWrap(!state.wrap));
  $("share").addEventListener("click", copyLink);
  for (const b of document.querySelectorAll("#pane-count button")) {
    b.addEventListener("click", () => { state.count = Number(b.dataset.count); render(); });
  }
  Layout.sideHandle($("side-handle"), $("side"), (px) => { state.side = px; }, saveView);
  // Keys: [ and ] (or Alt+Left/Right) step through the schedule, w wraps. The arrow keys alone
  // are left to the browser: they scroll the pane last clicked.
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("textarea, select, input, .cm-editor")) return;
    if (e.ctrlKey || e.metaKey) return;
    const back = e.key === "[" || (e.altKey && e.key === "ArrowLeft");
    const forward = e.key === "]" || (e.altKey && e.key === "ArrowRight");
    if (back || forward) { e.preventDefault(); goTo(state.view + (forward ? 1 : -1), false); }
    else if (e.key === "w" && !e.altKey) { e.preventDefault(); setWrap(!state.wrap); }
  });
  window.addEventListener("hashchange", openLink);  // a link pasted into this tab
  openLink();
})();
