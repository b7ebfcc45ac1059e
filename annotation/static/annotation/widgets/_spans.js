// A text whose characters (code points) can be selected with the mouse or the keyboard and marked.
// Used by the NER and MRC widgets. Offsets are code-point indices, end exclusive, like the server's.
import { codePoints, h } from "./_util.js";

export class SpanText {
  /**
   * @param {string} text
   * @param {{label?: string, onChange?: () => void}} options
   */
  constructor(text, { label = "", onChange = () => {} } = {}) {
    this.chars = codePoints(text);
    this.onChange = onChange;
    this.caret = 0;
    this.anchor = null; // selection anchor; null = no selection
    this.marks = [];
    this.dragging = false;
    this.el = h("div", { class: "span-text", tabindex: "0", role: "textbox", "aria-readonly": "true",
                         "aria-label": label, lang: "ko" });
    this.cells = this.chars.map((ch, i) =>
      h("span", { class: ch === " " ? "ch space" : "ch", dataset: { i: String(i) } }, ch));
    this.el.append(...this.cells);
    this.el.addEventListener("mousedown", (event) => this.#mouse(event, "down"));
    this.el.addEventListener("mouseover", (event) => this.#mouse(event, "over"));
    this.render();
  }

  #mouse(event, kind) {
    const cell = event.target.closest?.(".ch");
    if (!cell || !this.el.contains(cell)) return;
    const i = Number(cell.dataset.i);
    if (kind === "down") {
      event.preventDefault();
      this.el.focus();
      this.dragging = true;
      document.addEventListener("mouseup", () => { this.dragging = false; }, { once: true });
      this.anchor = i;
      this.caret = i;
    } else if (this.dragging) {
      this.caret = i;
    } else {
      return;
    }
    this.render();
    this.onChange();
  }

  /** The selected range [start, end) in code points, or null. Mouse and keyboard selections include
   *  both the anchor and the caret character. */
  selection() {
    if (this.anchor === null) return null;
    const start = Math.min(this.anchor, this.caret);
    const end = Math.max(this.anchor, this.caret) + 1;
    return { start, end: Math.min(end, this.chars.length) };
  }

  clearSelection() {
    this.anchor = null;
    this.render();
  }

  text(start, end) {
    return this.chars.slice(start, end).join("");
  }

  setMarks(marks) {
    this.marks = marks;
    this.render();
  }

  select(start, end) {
    this.anchor = start;
    this.caret = Math.max(start, end - 1);
    this.render();
  }

  /** Arrow keys move the caret; with Shift they extend the selection. Returns true when handled. */
  handleKey(event) {
    const n = this.chars.length;
    let next = null;
    if (event.key === "ArrowLeft") next = Math.max(0, this.caret - 1);
    else if (event.key === "ArrowRight") next = Math.min(n - 1, this.caret + 1);
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = n - 1;
    else if (event.key === "Escape" && this.anchor !== null) {
      this.clearSelection();
      return true;
    }
    if (next === null || event.altKey || event.ctrlKey || event.metaKey) return false;
    if (event.shiftKey) {
      if (this.anchor === null) this.anchor = this.caret;
    } else {
      this.anchor = null;
    }
    this.caret = next;
    this.render();
    this.onChange();
    return true;
  }

  render() {
    const sel = this.selection();
    this.cells.forEach((cell, i) => {
      cell.className = this.chars[i] === " " ? "ch space" : "ch";
      if (i === this.caret) cell.classList.add("caret");
      if (sel && i >= sel.start && i < sel.end) cell.classList.add("selected");
      delete cell.dataset.tag;
    });
    for (const mark of this.marks) {
      for (let i = mark.start; i < mark.end && i < this.cells.length; i++) {
        const cell = this.cells[i];
        cell.classList.add("mark", ...mark.classes);
        if (i === mark.start) cell.classList.add("mark-start");
        if (i === mark.end - 1) {
          cell.classList.add("mark-end");
          if (mark.tag) cell.dataset.tag = mark.tag;
        }
      }
    }
  }
}
