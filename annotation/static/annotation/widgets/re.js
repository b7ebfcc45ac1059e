// Relation extraction: the sentence with its subject and object marked (types shown), and the
// project's relations in a searchable list grouped by org:/per: (no_relation on 0).
import { Incomplete, codePoints, h, isTyping, kbd, plain } from "./_util.js";

export function mount(root, { item, schema, strings: T, names = {}, draft, suggestion = null, onChange }) {
  const labels = schema.labels || [];
  let chosen = labels.includes(draft?.label) ? draft.label : null;
  let query = "";
  let active = 0;
  // True while the highlight has been moved away from the chosen relation with the arrow keys: Enter
  // then picks the highlighted relation (and submits it), as the shortcut panel says.
  let browsing = false;

  const chars = codePoints(item.sentence);
  // KLUE-RE end_idx is inclusive.
  const marks = [
    { ...item.subject_entity, cls: "re-subj", role: T.re_subject },
    { ...item.object_entity, cls: "re-obj", role: T.re_object },
  ].sort((a, b) => a.start_idx - b.start_idx);
  const pieces = [];
  let pos = 0;
  for (const mark of marks) {
    if (mark.start_idx < pos) continue; // overlapping entities: show the first one only
    pieces.push(chars.slice(pos, mark.start_idx).join(""));
    pieces.push(h("mark", { class: `re-ent ${mark.cls}`, title: `${mark.role} (${mark.type})` },
      chars.slice(mark.start_idx, mark.end_idx + 1).join(""), h("sub", {}, `${mark.role} · ${mark.type}`)));
    pos = mark.end_idx + 1;
  }
  pieces.push(chars.slice(pos).join(""));

  const search = h("input", { type: "search", class: "re-search", placeholder: T.re_search, "aria-label": T.re_search,
                              autocomplete: "off", oninput: () => { query = search.value; active = 0; renderList(); } });
  // The list scrolls: it is reachable with Tab, and the arrow keys move its highlight (aria-activedescendant).
  const picker = h("div", { class: "re-picker", role: "listbox", "aria-label": T.re_search, tabindex: "0" });
  const optionPrefix = `re-option-${Math.random().toString(36).slice(2)}`;
  const chosenView = h("p", { "aria-live": "polite" });
  root.append(
    h("p", { class: "re-sentence", lang: "ko" }, pieces),
    h("p", { class: "ws-instruction" }, T.re_instruction),
    h("p", {}, search),
    picker,
    chosenView,
  );

  function groupOf(label) {
    const colon = label.indexOf(":");
    return colon < 0 ? "" : label.slice(0, colon + 1);
  }

  function filtered() {
    const q = query.trim().toLowerCase();
    // The search finds a relation by its value (per:parents) or its name in the reader's language (부모).
    return labels.filter((label) => !q || label.toLowerCase().includes(q) || (names[label] ?? "").toLowerCase().includes(q));
  }

  function choose(label) {
    chosen = label;
    browsing = false;
    renderList();
    onChange();
  }

  function renderList() {
    const visible = filtered();
    active = Math.max(0, Math.min(active, visible.length - 1));
    const groups = new Map();
    for (const label of visible) {
      const group = groupOf(label);
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group).push(label);
    }
    // A valid listbox: options in labelled groups; the visible group heading is for sighted users only.
    picker.replaceChildren(...[...groups].map(([group, members]) =>
      h("section", { class: "re-group", role: "none" }, h("h4", { "aria-hidden": "true" }, group || "—"),
        h("ul", { role: "group", "aria-label": group || "—" }, members.map((label) => h("li", { role: "none" },
          h("button", { type: "button", role: "option", class: `re-option${visible[active] === label ? " active" : ""}`,
                        id: `${optionPrefix}-${labels.indexOf(label)}`,
                        "aria-selected": String(label === chosen), tabindex: "-1",
                        dataset: { label, suggested: String(suggestion?.label === label) },
                        onclick: () => choose(label) },
            label === "no_relation" ? [kbd("0"), " "] : null, names[label] ?? label,
            names[label] ? [" ", h("code", { class: "re-value" }, label)] : null,
            suggestion?.label === label ? [" ", h("span", { class: "suggested-tag" }, T.suggested_part)] : null)))))));
    const highlighted = picker.querySelector(".re-option.active");
    if (highlighted) picker.setAttribute("aria-activedescendant", highlighted.id);
    else picker.removeAttribute("aria-activedescendant");
    highlighted?.scrollIntoView({ block: "nearest" });
    chosenView.replaceChildren(T.re_chosen, ": ", h("span", { class: "re-chosen" },
      chosen === null ? T.none : names[chosen] ? `${names[chosen]} (${chosen})` : chosen));
  }
  renderList();

  function move(delta) {
    const visible = filtered();
    if (!visible.length) return;
    active = (active + delta + visible.length) % visible.length;
    browsing = true;
    renderList();
  }

  return {
    shortcuts: [["/", T.re_key_search], ["↑ / ↓", T.re_key_updown], ["Space", T.re_key_enter],
                ["Enter", T.re_key_submit], ["0", T.re_key_zero]],
    handleKey(event) {
      const inSearch = event.target === search;
      if (inSearch) {
        if (event.key === "ArrowDown" || event.key === "ArrowUp") {
          move(event.key === "ArrowDown" ? 1 : -1);
          return true;
        }
        if (event.key === "Enter" && !event.ctrlKey && !event.metaKey) {
          // One Enter picks the highlighted relation and submits it; with no match it only leaves the box.
          const visible = filtered();
          search.blur();
          if (!visible.length) return true;
          choose(visible[active]);
          return "submit";
        }
        if (event.key === "Escape") {
          search.blur();
          return true;
        }
        return false;
      }
      if (isTyping(event.target) || !plain(event)) return false;
      if (event.key === "/") {
        search.focus();
        search.select();
        return true;
      }
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        move(event.key === "ArrowDown" ? 1 : -1);
        return true;
      }
      if (event.key === " ") {
        const visible = filtered();
        if (visible.length) choose(visible[active]);
        return true;
      }
      if (event.key === "Enter" && !event.shiftKey) {
        // Enter on a relation (clicked, or highlighted with the arrow keys) picks it and submits it at once;
        // on the workspace's own buttons (skip, flag, …) it keeps their meaning.
        if (event.target instanceof Element && event.target.matches("button, a, summary")
            && !picker.contains(event.target)) return false;
        const clicked = event.target instanceof Element ? event.target.closest(".re-option")?.dataset.label : null;
        const visible = filtered();
        if (clicked) choose(clicked);
        else if (browsing && visible.length) choose(visible[active]);
        return "submit";
      }
      if (event.key === "0" && labels.includes("no_relation")) {
        choose("no_relation");
        return true;
      }
      return false;
    },
    getPayload() {
      if (!chosen) throw new Incomplete(T.re_need_label);
      return { label: chosen };
    },
    getDraft: () => ({ label: chosen }),
  };
}
