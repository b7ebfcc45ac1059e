// Dialogue state tracking (WoS): the dialogue turn by turn; for each user turn the cumulative state,
// edited with domain → slot → value pickers from the project's ontology. A user turn the annotator has
// not touched carries over the state of the previous user turn.
import { Incomplete, fmt, h, isTyping, plain } from "./_util.js";

export function mount(root, { item, schema, strings: T, names = {}, draft, suggestion = null, onChange }) {
  const ontology = schema.ontology || {};
  const special = schema.special_values || ["none", "dontcare"];
  const free = new Set(schema.free_value_slots || []);
  const slotsByDomain = new Map();
  for (const key of Object.keys(ontology)) {
    const cut = key.indexOf("-");
    const domain = key.slice(0, cut);
    if (!slotsByDomain.has(domain)) slotsByDomain.set(domain, []);
    slotsByDomain.get(domain).push(key.slice(cut + 1));
  }
  const turns = item.dialogue || [];
  const userTurns = turns.map((turn, i) => (turn.role === "user" ? i : -1)).filter((i) => i >= 0);
  const m = userTurns.length;
  // null = untouched: the state carries over from the previous user turn.
  let states = Array.isArray(draft?.states) && draft.states.length === m ? draft.states : new Array(m).fill(null);
  let current = Number.isInteger(draft?.current) ? Math.min(Math.max(draft.current, 0), m - 1) : 0;

  // Entries of a turn's state that are still the model's suggestion for that turn are marked.
  const offered = Array.isArray(suggestion?.states) && suggestion.states.length === m ? suggestion.states : null;
  const fromModel = (t, entry) => Boolean(offered) && offered[t].includes(entry);

  const uid = Math.random().toString(36).slice(2);
  const list = (id, values) => h("datalist", { id: `${uid}-${id}` },
    values.map((v) => h("option", { value: v, label: names[v] ?? null })));
  const domainList = list("domains", [...slotsByDomain.keys()]);
  const slotList = list("slots", []);
  const valueList = list("values", []);
  const domainInput = h("input", { list: `${uid}-domains`, class: "dst-domain", autocomplete: "off", lang: "ko",
                                   oninput: () => refreshLists() });
  const slotInput = h("input", { list: `${uid}-slots`, class: "dst-slot", autocomplete: "off", lang: "ko",
                                 oninput: () => refreshLists() });
  const valueInput = h("input", { list: `${uid}-values`, class: "dst-value", autocomplete: "off", lang: "ko" });
  // The dialogue scrolls when it is long (Korean glyphs make it taller): a keyboard user reaches it with Tab and
  // scrolls it with the arrow keys.
  const dialogue = h("ol", { class: "dst-dialogue", tabindex: "0", "aria-label": T.dst_dialogue });
  const stateView = h("div", { class: "dst-state", "aria-live": "polite" });
  const problem = h("p", { class: "error", "aria-live": "polite" });

  root.append(
    h("p", { class: "ws-instruction" }, T.dst_instruction),
    h("div", { class: "dst-layout" },
      dialogue,
      h("div", {},
        stateView,
        h("div", { class: "dst-add" },
          h("label", {}, T.dst_domain, domainInput), h("label", {}, T.dst_slot, slotInput),
          h("label", {}, T.dst_value, valueInput),
          h("button", { type: "button", class: "small", onclick: () => add() }, T.dst_add)),
        problem, domainList, slotList, valueList)),
  );

  function effective(t) {
    for (let k = t; k >= 0; k--) if (states[k] !== null) return states[k];
    return [];
  }

  function slotOf(entry) {
    const parts = entry.split("-");
    return `${parts[0]}-${parts[1]}`;
  }

  function refreshLists() {
    const slots = slotsByDomain.get(domainInput.value.trim()) || [];
    const domain = domainInput.value.trim();
    slotList.replaceChildren(...slots.map((s) => h("option", { value: s, label: names[`${domain}-${s}`] ?? null })));
    const values = ontology[`${domainInput.value.trim()}-${slotInput.value.trim()}`] || [];
    valueList.replaceChildren(...[...new Set([...values, ...special])].map((v) => h("option", { value: v })));
  }

  function valid(slot, value) {
    if (!(slot in ontology)) return fmt(T.dst_unknown_slot, { slot });
    if (!value) return fmt(T.dst_bad_value, { value: "", slot });
    if (!special.includes(value) && !free.has(slot) && !ontology[slot].includes(value)) {
      return fmt(T.dst_bad_value, { value, slot });
    }
    return "";
  }

  function add() {
    const slot = `${domainInput.value.trim()}-${slotInput.value.trim()}`;
    const value = valueInput.value.trim();
    const error = valid(slot, value);
    problem.textContent = error;
    if (error) return false;
    const state = effective(current).filter((entry) => slotOf(entry) !== slot);
    states[current] = [...state, `${slot}-${value}`];
    slotInput.value = "";
    valueInput.value = "";
    refreshLists();
    changed();
    slotInput.focus();
    return true;
  }

  function remove(entry) {
    states[current] = effective(current).filter((e) => e !== entry);
    changed();
  }

  function go(t) {
    current = Math.max(0, Math.min(m - 1, t));
    render();
    dialogue.querySelector(".current")?.scrollIntoView({ block: "nearest" });
    onChange();
  }

  function changed() {
    render();
    onChange();
  }

  function render() {
    dialogue.replaceChildren(...turns.map((turn, i) => {
      const t = userTurns.indexOf(i);
      const user = turn.role === "user";
      return h("li", { class: `dst-turn ${user ? "user" : "sys"}${t === current ? " current" : ""}`,
                       dataset: { turn: String(i) }, onclick: user ? () => go(t) : null },
        h("span", { class: "who" }, user ? `${T.dst_user} · ${fmt(T.dst_turn, { n: t + 1 })}` : T.dst_system),
        h("span", { lang: "ko" }, turn.text));
    }));
    const carried = states[current] === null && current > 0;
    const entries = effective(current);
    // replaceChildren prints a null child as "null": the optional note is filtered out when absent.
    stateView.replaceChildren(...[
      h("h3", { class: "ws-small-head" }, `${T.dst_state} (${fmt(T.dst_turn, { n: current + 1 })})`),
      entries.length
        ? h("ul", {}, entries.map((entry) => h("li", {
            class: [carried ? "carried" : "", fromModel(current, entry) ? "suggested" : ""].filter(Boolean).join(" "),
            lang: "ko", dataset: { entry, suggested: String(fromModel(current, entry)) } },
            entry, fromModel(current, entry) ? [" ", h("span", { class: "suggested-tag" }, T.suggested_part)] : null,
            h("button", { type: "button", class: "x", title: T.remove, "aria-label": T.remove,
                                  onclick: () => remove(entry) }, "×"))))
        : h("p", { class: "muted" }, T.dst_empty_state),
      carried ? h("p", { class: "muted" }, T.dst_carried) : null,
    ].filter(Boolean));
  }
  render();

  return {
    shortcuts: [["[ / ]", T.dst_key_turns], ["A", T.dst_key_add]],
    handleKey(event) {
      const inPicker = [domainInput, slotInput, valueInput].includes(event.target);
      if (inPicker) {
        if (event.key === "Escape") {
          event.target.blur();
          return true;
        }
        if (event.key === "Enter" && !event.ctrlKey && !event.metaKey) {
          if (event.target === domainInput) slotInput.focus();
          else if (event.target === slotInput) valueInput.focus();
          else add();
          return true;
        }
        return false;
      }
      if (isTyping(event.target) || !plain(event)) return false;
      if (event.key === "[" || event.key === "]") {
        go(current + (event.key === "]" ? 1 : -1));
        return true;
      }
      if (event.key.toLowerCase() === "a") {
        domainInput.focus();
        domainInput.select();
        return true;
      }
      return false;
    },
    getPayload() {
      const out = userTurns.map((_, t) => [...effective(t)]);
      for (const state of out) {
        for (const entry of state) {
          const parts = entry.split("-");
          const error = valid(`${parts[0]}-${parts[1]}`, parts.slice(2).join("-"));
          if (error) throw new Incomplete(error);
        }
      }
      return { states: out };
    },
    getDraft: () => ({ states, current }),
  };
}
