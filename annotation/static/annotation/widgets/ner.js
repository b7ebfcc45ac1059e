// Named entity recognition: select characters (mouse drag, or Shift+arrows) and press the number of a
// type. Offsets are code points, end exclusive: an emoji counts as one character, as on the server.
import { SpanText } from "./_spans.js";
import { Incomplete, digitOf, h, isTyping, kbd, plain } from "./_util.js";

/** Entity colours (ent-c0 … in goldset.css, as the review pages' marks), in the order of the project's types. */
const PALETTE_SIZE = 6;

/** The widget's draft from an annotation payload (a model's suggestion pre-fills the widget with it). */
export function draftFromPayload(payload) {
  return { entities: Array.isArray(payload?.entities) ? payload.entities.map((e) => ({ ...e })) : [] };
}

const spanKey = (e) => `${e.start}:${e.end}:${e.type}`;

export function mount(root, { item, schema, strings: T, names = {}, draft, suggestion = null, onChange, say }) {
  const types = schema.labels || [];
  const descriptions = schema.descriptions || {};
  const allowOverlap = Boolean(schema.allow_overlap);
  const text = new SpanText(item.sentence, { label: T.selection, strings: T, onChange: () => render() });
  const n = text.chars.length;
  let entities = (Array.isArray(draft?.entities) ? draft.entities : []).filter((e) =>
    Number.isInteger(e.start) && Number.isInteger(e.end) && e.start >= 0 && e.end <= n && e.start < e.end
    && types.includes(e.type));

  const typeButtons = types.map((type, i) =>
    h("button", { type: "button", class: "choice", dataset: { type },
                  onclick: () => label(type) },
      i < 9 ? kbd(String(i + 1)) : null, " ", h("span", { class: `type-tag ${typeClass(type)}` }, type), " ",
      names[type] ? h("span", {}, names[type]) : descriptions[type] ? h("span", { lang: "ko" }, descriptions[type]) : null));
  const list = h("ul", { class: "entity-list", "aria-live": "polite" });
  root.append(
    h("p", { class: "ws-instruction" }, T.ner_instruction),
    text.el,
    h("div", { class: "choices", role: "group", "aria-label": T.ner_group }, typeButtons),
    h("h3", { class: "ws-small-head" }, T.ner_entities),
    list,
  );

  // Spans still exactly as the model suggested them are marked; a changed or new span is the annotator's.
  const offered = new Set((suggestion?.entities || []).map(spanKey));
  const fromModel = (e) => offered.has(spanKey(e));

  function typeClass(type) {
    const index = types.indexOf(type);
    return index >= 0 ? `ent-c${index % PALETTE_SIZE}` : "ent-other";
  }

  function overlaps(start, end, except = null) {
    return entities.some((e) => e !== except && e.start < end && start < e.end);
  }

  function label(type) {
    const sel = text.selection();
    if (!sel) {
      say(T.ner_select_first, "error");
      return;
    }
    let { start, end } = sel;
    // Spaces at the edges of a drag are never part of an entity.
    while (start < end && /\s/u.test(text.chars[start])) start++;
    while (end > start && /\s/u.test(text.chars[end - 1])) end--;
    if (start >= end) return;
    const same = entities.find((e) => e.start === start && e.end === end);
    if (same) {
      same.type = type;
    } else if (!allowOverlap && overlaps(start, end)) {
      say(T.ner_overlap, "error");
      return;
    } else {
      entities.push({ start, end, type });
    }
    say("");
    text.clearSelection();
    changed();
  }

  // The entity the caret stands in, or else the one it stands right after (where a selection just ended).
  function atCaret() {
    return entities.find((e) => e.start <= text.caret && text.caret < e.end)
      || entities.find((e) => e.end === text.caret) || null;
  }

  function remove(entity) {
    entities = entities.filter((e) => e !== entity);
    changed();
  }

  function adjust(entity, edge, delta) {
    const start = edge === "start" ? entity.start + delta : entity.start;
    const end = edge === "end" ? entity.end + delta : entity.end;
    if (start < 0 || end > n || start >= end || (!allowOverlap && overlaps(start, end, entity))) return;
    entity.start = start;
    entity.end = end;
    changed();
  }

  function changed() {
    entities.sort((a, b) => a.start - b.start || a.end - b.end);
    render();
    onChange();
  }

  function render() {
    text.setMarks(entities.map((e) => ({ start: e.start, end: e.end, tag: e.type,
                                         classes: [typeClass(e.type), ...(fromModel(e) ? ["suggested"] : [])] })));
    list.replaceChildren(...(entities.length ? entities.map((e) =>
      h("li", { class: fromModel(e) ? "suggested" : null,
                dataset: { start: String(e.start), end: String(e.end), type: e.type, suggested: String(fromModel(e)) } },
        h("span", { lang: "ko" }, text.text(e.start, e.end)), " ",
        h("span", { class: `type-tag ${typeClass(e.type)}` }, e.type), " ",
        h("small", { class: "muted" }, `[${e.start}, ${e.end})`),
        fromModel(e) ? [" ", h("span", { class: "suggested-tag" }, T.suggested_part)] : null,
        h("button", { type: "button", class: "x", title: T.remove, "aria-label": T.remove,
                      onclick: () => remove(e) }, "×")))
      : [h("li", { class: "muted empty-entities" }, T.ner_no_entities)]));
  }
  render();

  return {
    shortcuts: [
      ["← / → / Shift+← / Shift+→", T.ner_key_move],
      [`1–${Math.min(types.length, 9)}`, T.ner_key_types],
      ["Delete", T.ner_key_delete],
      ["Alt+← / Alt+→ / Alt+Shift+← / Alt+Shift+→", T.ner_key_adjust],
    ],
    handleKey(event) {
      if (isTyping(event.target)) return false;
      if (event.altKey && !event.ctrlKey && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {
        const entity = atCaret();
        if (entity) adjust(entity, event.shiftKey ? "start" : "end", event.key === "ArrowLeft" ? -1 : 1);
        return true;
      }
      const digit = digitOf(event);
      if (digit !== null && plain(event) && digit >= 1 && digit <= types.length) {
        label(types[digit - 1]);
        return true;
      }
      if ((event.key === "Delete" || event.key === "Backspace") && plain(event)) {
        const entity = atCaret();
        if (entity) remove(entity);
        return true;
      }
      return text.handleKey(event);
    },
    getPayload() {
      for (const e of entities) {
        if (!allowOverlap && overlaps(e.start, e.end, e)) throw new Incomplete(T.ner_overlap);
      }
      return { entities: entities.map(({ start, end, type }) => ({ start, end, type })) };
    },
    getDraft: () => ({ entities }),
    focus: () => text.el.focus(),
  };
}
