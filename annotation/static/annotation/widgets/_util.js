// Small DOM and keyboard helpers shared by the widgets (no framework, no build step).

/** Create an element: h("button", {class: "x", onclick: fn}, "text", child). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** The text as Unicode code points: the unit of every offset Goldset stores (JS strings are UTF-16). */
export function codePoints(text) {
  return Array.from(text ?? "");
}

/** True while the user types in a field: single-key shortcuts must not fire then. */
export function isTyping(target) {
  return target instanceof Element && target.matches("input, textarea, select, [contenteditable='true']");
}

/** The digit of a number-row or keypad key, whatever the layout or modifier (Shift+1 is "!" in e.key). */
export function digitOf(event) {
  const match = /^(?:Digit|Numpad)(\d)$/.exec(event.code || "");
  return match ? Number(match[1]) : null;
}

/** True when no modifier (other than the ones allowed) is held. */
export function plain(event, { shift = false } = {}) {
  return !event.ctrlKey && !event.altKey && !event.metaKey && (shift || !event.shiftKey);
}

/** Django-style "%(name)s" interpolation for the translated strings handed over by the page. */
export function fmt(template, values = {}) {
  return String(template).replace(/%\((\w+)\)s/g, (_, key) => (key in values ? String(values[key]) : ""));
}

/** A <kbd> element. */
export function kbd(text) {
  return h("kbd", {}, text);
}

/** An error the workspace shows as "Not submitted: …" instead of sending the payload. */
export class Incomplete extends Error {}
