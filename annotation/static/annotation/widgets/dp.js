// Dependency parsing over eojeol: for each token a head (click the head token, or type its number;
// 0 = root) and a DEPREL. Arcs are drawn above the sentence. Every eojeol starts attached to the next
// one (Korean is head-final); the widget refuses a tree with a cycle or without exactly one root.
import { Incomplete, fmt, h, isTyping, kbd, plain } from "./_util.js";

const SVG = "http://www.w3.org/2000/svg";
// One resize listener for the page, redrawing whichever sentence is shown now.
let redraw = null;
window.addEventListener("resize", () => redraw?.());

function svg(tag, attrs = {}, text = null) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  if (text !== null) el.textContent = text;
  return el;
}

/** Tokens (1-based) on a cycle of the head relation, or [] (heads: 0 = root, else a token number). */
export function findCycle(heads) {
  const state = new Array(heads.length + 1).fill(0); // 0 new, 1 on the current path, 2 done
  for (let start = 1; start <= heads.length; start++) {
    const path = [];
    let node = start;
    while (node > 0 && node <= heads.length && state[node] === 0) {
      state[node] = 1;
      path.push(node);
      node = heads[node - 1];
    }
    if (node > 0 && node <= heads.length && state[node] === 1) return path.slice(path.indexOf(node));
    for (const visited of path) state[visited] = 2;
  }
  return [];
}

export function headFinal(n) {
  return Array.from({ length: n }, (_, i) => (i < n - 1 ? i + 2 : 0));
}

export function mount(root, { item, schema, strings: T, names = {}, draft, suggestion = null, onChange }) {
  const tokens = item.tokens || [];
  const n = tokens.length;
  const deprelList = schema.deprels || [];
  let heads = Array.isArray(draft?.heads) && draft.heads.length === n ? [...draft.heads] : headFinal(n);
  let deprels = Array.isArray(draft?.deprels) && draft.deprels.length === n ? [...draft.deprels] : new Array(n).fill("");
  let selected = Number.isInteger(draft?.selected) ? Math.min(Math.max(0, draft.selected), n - 1) : 0;

  // An arc (head and DEPREL) still as the model suggested it is marked; one the annotator changed is not.
  const offered = Array.isArray(suggestion?.heads) && suggestion.heads.length === n ? suggestion : null;
  const fromModel = (i) => Boolean(offered) && heads[i] === offered.heads[i] && deprels[i] === offered.deprels[i];

  const datalistId = `dp-deprels-${Math.random().toString(36).slice(2)}`;
  const arcs = svg("svg", { class: "dp-arcs", role: "img", "aria-label": T.dp_arcs });
  const tokenEls = tokens.map((token, i) =>
    h("button", { type: "button", class: "dp-token", dataset: { i: String(i) }, onclick: () => clickToken(i),
                  tabindex: "-1" },
      h("span", { class: "idx" }, String(i + 1)), h("span", { class: "form", lang: "ko" }, token.form),
      h("span", { class: "pos" }, token.pos)));
  const row = h("div", { class: "dp-tokens" }, tokenEls);
  // A long sentence scrolls sideways: the canvas is reachable with Tab, and the selected eojeol is kept in view.
  const canvas = h("div", { class: "dp-canvas", tabindex: "0", role: "group", "aria-label": T.dp_sentence }, arcs, row);
  const headInputs = [];
  const deprelInputs = [];
  const rows = tokens.map((token, i) => {
    const head = h("input", { class: "head", inputmode: "numeric", autocomplete: "off", "aria-label": `${T.dp_head} ${i + 1}`,
                              oninput: () => { heads[i] = head.value.trim() === "" ? null : Number(head.value); changed(false); },
                              onfocus: () => select(i) });
    const deprel = h("input", { class: "deprel", list: datalistId, autocomplete: "off", spellcheck: "false",
                                "aria-label": `${T.dp_deprel} ${i + 1}`,
                                oninput: () => { deprel.value = deprel.value.toUpperCase(); deprels[i] = deprel.value.trim(); changed(false); },
                                onfocus: () => select(i) });
    headInputs.push(head);
    deprelInputs.push(deprel);
    return h("tr", { dataset: { i: String(i) }, onclick: (event) => { if (!isTyping(event.target)) select(i); } },
      h("td", {}, String(i + 1)), h("td", { lang: "ko" }, token.form), h("td", {}, h("code", {}, token.pos)),
      h("td", {}, head), h("td", {}, deprel));
  });
  const errors = h("ul", { class: "ws-errors", "aria-live": "polite" });
  root.append(
    h("p", { class: "ws-instruction" }, T.dp_instruction),
    canvas,
    h("p", {}, h("button", { type: "button", class: "secondary small", onclick: () => reset() },
                 T.dp_attach_next, " ", kbd("Shift+N"))),
    h("table", { class: "table dp-table" },
      h("thead", {}, h("tr", {}, [T.dp_token, "", T.dp_pos, T.dp_head, T.dp_deprel].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows)),
    h("datalist", { id: datalistId }, deprelList.map((d) => h("option", { value: d, label: names[d] ?? null }))),
    errors,
  );

  function select(i) {
    selected = i;
    tokenEls.forEach((el, j) => el.classList.toggle("selected", j === i));
    rows.forEach((tr, j) => tr.classList.toggle("selected", j === i));
    // Sideways only: scrolling the page would pull the table row being typed in out of view.
    const token = tokenEls[i];
    if (token && (token.offsetLeft < canvas.scrollLeft
                  || token.offsetLeft + token.offsetWidth > canvas.scrollLeft + canvas.clientWidth)) {
      canvas.scrollLeft = token.offsetLeft - (canvas.clientWidth - token.offsetWidth) / 2;
    }
    draw();
  }

  function clickToken(i) {
    // Clicking another token makes it the head of the selected one, then moves on to the next eojeol.
    if (i === selected) return;
    heads[selected] = i + 1;
    changed(true);
    if (selected < n - 1) select(selected + 1);
  }

  function reset() {
    heads = headFinal(n);
    changed(true);
  }

  function markSuggested() {
    if (!offered) return;
    rows.forEach((tr, i) => {
      tr.classList.toggle("suggested", fromModel(i));
      tr.dataset.suggested = String(fromModel(i));
    });
  }

  function changed(syncInputs) {
    if (syncInputs) fill();
    markSuggested();
    draw();
    errors.replaceChildren(...problems().map((p) => h("li", {}, p)));
    onChange();
  }

  function fill() {
    headInputs.forEach((input, i) => { input.value = heads[i] === null ? "" : String(heads[i]); });
    deprelInputs.forEach((input, i) => { input.value = deprels[i]; });
  }

  function problems() {
    const found = [];
    heads.forEach((head, i) => {
      if (!Number.isInteger(head) || head < 0 || head > n || head === i + 1) found.push(fmt(T.dp_bad_head, { i: i + 1, n }));
    });
    if (found.length) return found;
    const roots = heads.filter((head) => head === 0).length;
    if (roots !== 1) found.push(fmt(T.dp_roots, { n: roots }));
    const cycle = findCycle(heads);
    if (cycle.length) found.push(fmt(T.dp_cycle, { tokens: [...cycle, cycle[0]].join(" → ") }));
    return found;
  }

  function draw() {
    // Token centres relative to the canvas (the positioned ancestor); the SVG covers the band above them.
    const centers = tokenEls.map((el) => el.offsetLeft + el.offsetWidth / 2);
    const spans = heads.map((head, i) => (Number.isInteger(head) && head > 0 && head <= n ? Math.abs(head - 1 - i) : 0));
    const height = Math.min(150, 34 + 16 * Math.max(1, ...spans));
    row.style.marginTop = `${height}px`;
    const width = Math.max(canvas.scrollWidth, row.offsetLeft + row.scrollWidth);
    arcs.setAttribute("width", width);
    arcs.setAttribute("height", height);
    arcs.setAttribute("viewBox", `0 0 ${width} ${height}`);
    const defs = svg("defs");
    const marker = svg("marker", { id: `${datalistId}-arrow`, viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 7,
                                   markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#2f5fd0" }));
    defs.append(marker);
    const shapes = [defs];
    heads.forEach((head, i) => {
      if (!Number.isInteger(head) || head < 0 || head > n || head === i + 1) return;
      const x2 = centers[i];
      const cls = [i === selected ? "sel" : "", fromModel(i) ? "suggested" : ""].filter(Boolean).join(" ");
      if (head === 0) {
        shapes.push(svg("path", { d: `M ${x2} 4 L ${x2} ${height - 2}`, class: cls, "marker-end": `url(#${datalistId}-arrow)` }));
        shapes.push(svg("text", { x: x2 + 4, y: 14 }, `${T.dp_root}${deprels[i] ? " " + deprels[i] : ""}`));
        return;
      }
      const x1 = centers[head - 1];
      const rise = Math.min(height - 8, 26 + 16 * Math.abs(head - 1 - i));
      const top = height - rise;
      shapes.push(svg("path", { d: `M ${x1} ${height - 2} C ${x1} ${top}, ${x2} ${top}, ${x2} ${height - 2}`, class: cls,
                                "marker-end": `url(#${datalistId}-arrow)` }));
      if (deprels[i]) shapes.push(svg("text", { x: (x1 + x2) / 2, y: top + 16, "text-anchor": "middle" }, deprels[i]));
    });
    arcs.replaceChildren(...shapes);
  }

  fill();
  markSuggested();
  requestAnimationFrame(() => { select(selected); errors.replaceChildren(...problems().map((p) => h("li", {}, p))); });
  redraw = draw;

  return {
    shortcuts: [
      ["← / →", T.dp_key_select], ["N", T.dp_key_next], ["R", T.dp_key_root], ["H", T.dp_key_head],
      ["D", T.dp_key_deprel], ["Shift+N", T.dp_key_reset],
    ],
    handleKey(event) {
      if (isTyping(event.target)) {
        const i = Number(event.target.closest("tr")?.dataset.i);
        if (!rows[i]?.contains(event.target)) return false;
        if (event.key === "Escape") {
          event.target.blur();
          return true;
        }
        if (event.key === "Enter" && !event.ctrlKey && !event.metaKey) {
          // Enter moves on: head → its DEPREL → the next eojeol's DEPREL; after the last one, leave the table.
          const next = event.target === headInputs[i] ? deprelInputs[i] : deprelInputs[i + 1];
          if (next) {
            next.focus();
            next.select();
          } else {
            event.target.blur();
          }
          return true;
        }
        return false;
      }
      if (event.key === "N" && event.shiftKey && !event.ctrlKey && !event.altKey) {
        reset();
        return true;
      }
      if (!plain(event)) return false;
      const key = event.key.toLowerCase();
      if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        select(Math.max(0, Math.min(n - 1, selected + (event.key === "ArrowLeft" ? -1 : 1))));
        return true;
      }
      if (key === "n") {
        heads[selected] = selected < n - 1 ? selected + 2 : 0;
        changed(true);
        return true;
      }
      if (key === "r") {
        heads[selected] = 0;
        changed(true);
        return true;
      }
      if (key === "h" || key === "d") {
        const input = (key === "h" ? headInputs : deprelInputs)[selected];
        input.focus();
        input.select();
        return true;
      }
      return false;
    },
    getPayload() {
      const found = problems();
      deprels.forEach((d, i) => { if (!deprelList.includes(d)) found.push(fmt(T.dp_bad_deprel, { i: i + 1 })); });
      if (found.length) throw new Incomplete(found.join("; "));
      return { heads: [...heads], deprels: [...deprels] };
    },
    getDraft: () => ({ heads, deprels, selected }),
  };
}
