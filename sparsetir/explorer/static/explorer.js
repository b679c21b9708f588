// sparsetir explorer: renders the document the page carries (sparsetir/explorer/document.py).
// Every line of every pane knows the script lines it came from ("origins"); hovering or clicking
// a line lights up, in every pane, the lines that share its most specific origin.
"use strict";
(function () {
  const KINDS = { script: "Script", stage1: "Stage I", stage2: "Stage II", stage3: "Stage III", code: "Code", diff: "Diff" };
  const CODE_NAMES = { ll: "LLVM IR", asm: "assembly", cuda: "CUDA" };
  const PALETTE = 12;

  const state = {
    doc: JSON.parse(document.getElementById("explorer-data").textContent),
    view: 0,                                 // which point of the schedule history is shown
    kinds: ["script", "stage2", "stage3"],   // what each pane shows
    count: 3,                                // how many panes are side by side
    diff: null,                              // {kind: "pass" | "step", index}: what the diff pane shows
    pinned: null,                            // origins of the clicked line
    editing: false,
    draft: null,                             // the script text being edited
    problem: null,                           // the located error of the last compile
  };
  let index = { byOrigin: new Map(), script: [] };   // script line -> rows showing something from it
  let lit = [];

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
      return { title: `after step ${s.number}: ${s.text}`, diff: s.diff };
    }
    return { title: "Diff", diff: null };
  }

  // ---- rendering -----------------------------------------------------------------------------

  function render() {
    index = { byOrigin: new Map(), script: [] };
    lit = [];
    renderTop();
    renderSide();
    const used = usedLines();
    const holder = $("panes");
    holder.replaceChildren();
    state.kinds.slice(0, state.count).forEach((kind, i) => holder.append(renderPane(kind, i, used)));
    if (state.pinned) light(state.pinned, "pinned");
    renderStatus();
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
    for (const b of document.querySelectorAll("#pane-count button")) b.classList.toggle("on", Number(b.dataset.count) === state.count);
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
    if (kind === "script" && state.doc.editable) {
      if (state.editing) {
        header.append(el("button", { class: "on", id: "compile", title: "compile the edited script (Ctrl+Enter)", onclick: () => compile(currentScript(), state.doc.func) }, "Compile"),
          el("button", { id: "cancel-edit", onclick: () => { state.editing = false; state.problem = null; render(); } }, "Cancel"));
        box.append(renderEditor());
        return box;
      }
      header.append(el("button", { id: "edit", title: "edit the script and compile it again", onclick: startEditing }, "Edit"));
    }
    const body = el("div", { class: "body" });
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
    p.lines.forEach((id, i) => {
      const origins = p.origins[i];
      const row = lineRow(i + 1, lines[id], origins, used);
      rows.append(row);
    });
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
      if (used.has(number)) row.classList.add("tint" + (number % PALETTE));
      index.script[number] = row;
    } else if (origins.length) {
      row.classList.add("tint" + (primary(origins) % PALETTE));
      for (const n of origins) {
        if (!index.byOrigin.has(n)) index.byOrigin.set(n, []);
        index.byOrigin.get(n).push(row);
      }
    }
    return row;
  }

  function renderDiff(body, rows) {
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

  // ---- editing (server mode) -----------------------------------------------------------------

  function currentScript() {
    const area = document.querySelector(".editor textarea");
    return area ? area.value : state.draft !== null ? state.draft : state.doc.script_text;
  }

  function startEditing() {
    state.editing = true;
    state.draft = state.draft !== null ? state.draft : state.doc.script_text;
    render();
    document.querySelector(".editor textarea").focus();
  }

  function renderEditor() {
    const wrap = el("div", { class: "editor-wrap" });
    const gutter = el("pre", { class: "gutter", "aria-hidden": "true" });
    const area = el("textarea", { spellcheck: "false", "aria-label": "script" });
    area.value = state.draft;
    const numbers = () => {
      const count = area.value.split("\n").length;
      const bad = state.problem && state.problem.line;
      gutter.replaceChildren(...Array.from({ length: count }, (_, k) =>
        el("span", { class: k + 1 === bad ? "error" : null, title: k + 1 === bad ? state.problem.message : null }, `${k + 1}\n`)));
    };
    area.addEventListener("input", () => { state.draft = area.value; numbers(); });
    area.addEventListener("scroll", () => { gutter.scrollTop = area.scrollTop; });
    area.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); compile(area.value, state.doc.func); }
    });
    numbers();
    wrap.append(el("div", { class: "editor" }, gutter, area));
    if (state.problem) {
      const p = state.problem;
      const where = p.line ? el("a", { href: "#", onclick: (e) => { e.preventDefault(); selectAt(area, p.line, p.col); } }, `line ${p.line}, column ${p.col}`) : null;
      wrap.append(el("pre", { class: "problem", id: "problem" }, where, where ? "\n" : null, p.rendered || p.message));
      setTimeout(() => selectAt(area, p.line, p.col), 0);
    }
    return wrap;
  }

  function selectAt(area, line, col) {
    if (!line) return;
    const lines = area.value.split("\n");
    let at = 0;
    for (let k = 0; k < line - 1 && k < lines.length; k++) at += lines[k].length + 1;
    at += Math.max(0, (col || 1) - 1);
    area.focus();
    area.setSelectionRange(at, at + 1);
    const lineHeight = parseFloat(getComputedStyle(area).lineHeight) || 18;
    area.scrollTop = Math.max(0, (line - 5) * lineHeight);
  }

  async function compile(script, func) {
    renderStatus("compiling\u2026");
    let response, data;
    try {
      response = await fetch("api/compile", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ script, func }) });
      data = await response.json();
    } catch (err) {
      renderStatus(`the explorer server did not answer: ${err}`, true);
      return;
    }
    if (response.ok && data.document) {
      state.doc = data.document;
      state.view = Math.min(state.view, Math.max(0, state.doc.views.length - 1));
      state.editing = false;
      state.problem = null;
      state.draft = null;
      state.pinned = null;
      if (state.diff && state.diff.kind === "step" && !state.doc.steps[state.diff.index]) state.diff = null;
      render();
      renderStatus(`compiled ${state.doc.func}`);
      return;
    }
    state.problem = data.error || { message: `the server answered ${response.status}` };
    state.editing = true;
    state.draft = script;
    render();
    const p = state.problem;
    renderStatus(p.line ? `error at line ${p.line}, column ${p.col}: ${p.message}` : `error: ${p.message}`, true);
  }

  // ---- wiring --------------------------------------------------------------------------------

  const panes = $("panes");
  panes.addEventListener("mouseover", onHover);
  panes.addEventListener("mouseleave", onLeave);
  panes.addEventListener("click", onClick);
  $("prev-step").addEventListener("click", () => goTo(state.view - 1, false));
  $("next-step").addEventListener("click", () => goTo(state.view + 1, false));
  for (const b of document.querySelectorAll("#pane-count button")) {
    b.addEventListener("click", () => { state.count = Number(b.dataset.count); render(); });
  }
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("textarea, select, input")) return;
    if (e.key === "j" || e.key === "ArrowDown") { e.preventDefault(); goTo(state.view + 1, false); }
    if (e.key === "k" || e.key === "ArrowUp") { e.preventDefault(); goTo(state.view - 1, false); }
  });
  render();
})();
