// A text whose characters (code points) can be selected with the mouse or the keyboard and marked.
// Used by the NER and MRC widgets. Offsets are code-point indices, end exclusive, like the server's.
import { codePoints, fmt, h } from "./_util.js";

let instances = 0;

export class SpanText {
  /**
   * @param {string} text
   * @param {{label?: string, strings?: {span_caret?: string, span_selection?: string}, onChange?: () => void}} options
   */
  constructor(text, { label = "", strings = {}, onChange = () => {} } = {}) {
    this.chars = codePoints(text);
    this.onChange = onChange;
    // The caret and the anchor are boundaries between characters (0..n), as in a text field: the caret
    // stands before the character it is drawn on, and a selection runs from the anchor to the caret.
    this.caret = 0;
    this.anchor = null; // selection anchor; null = no selection
    this.marks = [];
    this.dragging = false;
    this.dragStart = 0;
    this.strings = strings;
    this.el = h("div", { class: "span-text", tabindex: "0", role: "textbox", "aria-readonly": "true",
                         "aria-label": label, lang: "ko" });
    // Screen readers follow the caret through aria-activedescendant and hear the caret position or the
    // selection through the description, which render() keeps current.
    const prefix = `span-text-${++instances}`;
    this.cells = this.chars.map((ch, i) =>
      h("span", { class: ch === " " ? "ch space" : "ch", id: `${prefix}-${i}`, dataset: { i: String(i) } }, ch));
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
      this.dragStart = i;
      this.anchor = i;
      this.caret = i + 1;
    } else if (this.dragging) {
      // A drag covers both the character pressed on and the one under the pointer.
      this.anchor = i >= this.dragStart ? this.dragStart : this.dragStart + 1;
      this.caret = i >= this.dragStart ? i + 1 : i;
    } else {
      return;
    }
    this.render();
    this.onChange();
  }

  /** The selected range [start, end) in code points, or null when nothing is selected. */
  selection() {
    if (this.anchor === null || this.anchor === this.caret) return null;
    return { start: Math.min(this.anchor, this.caret), end: Math.max(this.anchor, this.caret) };
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
    this.caret = end;
    this.render();
  }

  /** Arrow keys move the caret; with Shift they extend the selection. Returns true when handled. */
  handleKey(event) {
    const n = this.chars.length;
    let next = null;
    if (event.key === "ArrowLeft") next = Math.max(0, this.caret - 1);
    else if (event.key === "ArrowRight") next = Math.min(n, this.caret + 1);
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = n;
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
    const n = this.cells.length;
    this.cells.forEach((cell, i) => {
      cell.className = this.chars[i] === " " ? "ch space" : "ch";
      if (i === this.caret) cell.classList.add("caret");
      if (i === n - 1 && this.caret === n) cell.classList.add("caret-end");
      if (sel && i >= sel.start && i < sel.end) cell.classList.add("selected");
      delete cell.dataset.tag;
    });
    const current = this.cells[Math.min(this.caret, n - 1)];
    if (current) this.el.setAttribute("aria-activedescendant", current.id);
    const said = sel
      ? fmt(this.strings.span_selection ?? "", { text: this.text(sel.start, sel.end), start: sel.start, end: sel.end })
      : fmt(this.strings.span_caret ?? "", { n: this.caret + 1, total: n });
    if (said) this.el.setAttribute("aria-description", said);
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
