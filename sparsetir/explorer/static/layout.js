// sparsetir explorer: the panes' layout. Their sizes (dragged with the handles between them)
// and each pane's scroll position outlive a redraw: moving to another schedule step draws every
// pane again, and the reader should stay where they were.
"use strict";
const Layout = (function () {
  const MIN_PANE = 140;   // px: a pane dragged smaller stops here
  const MIN_SIDE = 120;

  /** `sizes` (fractions of the row) if they are for `count` panes, else equal ones. */
  function fit(sizes, count) {
    if (Array.isArray(sizes) && sizes.length === count && sizes.every((s) => s > 0)) return sizes;
    return Array.from({ length: count }, () => 1 / count);
  }

  /** Calls `move(dx)` while the handle is dragged (dx: px from where the drag started), `done()` after. */
  function drag(handle, start, move, done) {
    handle.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      e.preventDefault();
      const x0 = e.clientX;
      start();
      handle.setPointerCapture(e.pointerId);
      handle.classList.add("dragging");
      const onMove = (ev) => move(ev.clientX - x0);
      const onUp = () => {
        handle.removeEventListener("pointermove", onMove);
        handle.removeEventListener("pointerup", onUp);
        handle.removeEventListener("pointercancel", onUp);
        handle.classList.remove("dragging");
        done();
      };
      handle.addEventListener("pointermove", onMove);
      handle.addEventListener("pointerup", onUp);
      handle.addEventListener("pointercancel", onUp);
    });
  }

  /** A handle between panes `i - 1` and `i` of `holder`: dragging it moves width from one to
   * the other, kept in `sizes` (changed in place); `done()` after a drag. */
  function paneHandle(holder, sizes, i, done) {
    const handle = document.createElement("div");
    handle.className = "handle";
    handle.dataset.between = String(i);
    handle.title = "drag to resize";
    let a, b, sum;
    const boxes = () => holder.querySelectorAll(":scope > .pane");
    drag(handle, () => {
      const panes = boxes();
      a = panes[i - 1].getBoundingClientRect().width;
      b = panes[i].getBoundingClientRect().width;
      sum = sizes[i - 1] + sizes[i];
    }, (dx) => {
      const left = Math.min(Math.max(a + dx, MIN_PANE), a + b - MIN_PANE);
      sizes[i - 1] = (sum * left) / (a + b);
      sizes[i] = sum - sizes[i - 1];
      const panes = boxes();
      panes[i - 1].style.flexGrow = String(sizes[i - 1]);
      panes[i].style.flexGrow = String(sizes[i]);
    }, done);
    return handle;
  }

  /** The handle between the side bar and the panes; `set(px)` is called with the side's width. */
  function sideHandle(handle, side, set, done) {
    let w;
    drag(handle, () => { w = side.getBoundingClientRect().width; }, (dx) => {
      const width = Math.max(MIN_SIDE, Math.min(w + dx, window.innerWidth * 0.7));
      side.style.width = `${Math.round(width)}px`;
      set(Math.round(width));
    }, done);
  }

  function scroller(pane) {
    return pane.querySelector(".cm-scroller") || pane.querySelector(".body");
  }

  /** Where each pane of `holder` is scrolled to: [{kind, top, left}] in pane order. */
  function saveScroll(holder) {
    return [...holder.querySelectorAll(":scope > .pane")].map((pane) => {
      const s = scroller(pane);
      return { kind: pane.dataset.kind, top: s ? s.scrollTop : 0, left: s ? s.scrollLeft : 0 };
    });
  }

  /** Scroll each pane of `holder` back to where the pane in the same place showing the same
   * kind of content was. */
  function restoreScroll(holder, saved) {
    [...holder.querySelectorAll(":scope > .pane")].forEach((pane, i) => {
      const s = scroller(pane);
      if (!s || !saved[i] || saved[i].kind !== pane.dataset.kind) return;
      s.scrollTop = saved[i].top;
      s.scrollLeft = saved[i].left;
    });
  }

  return { fit, paneHandle, sideHandle, saveScroll, restoreScroll };
})();
