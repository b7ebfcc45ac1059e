// Natural language inference in two stages. Writing: the premise and the target relation; the
// annotator writes a hypothesis. Validation: the premise and someone else's hypothesis; three labels.
import { Incomplete, digitOf, h, isTyping, kbd, plain } from "./_util.js";

export function mount(root, { item, stage, schema, strings: T, names = {}, draft, suggestion = null, onChange }) {
  const labels = schema.labels || ["entailment", "neutral", "contradiction"];
  const writing = stage === "writing";
  const target = writing && labels.includes(item.target_label) ? item.target_label : null;
  let label = target ?? (labels.includes(draft?.label) ? draft.label : null);

  const buttons = labels.map((value, i) =>
    h("button", { type: "button", class: "choice", dataset: { label: value, suggested: String(suggestion?.label === value) },
                  disabled: target !== null && value !== target,
                  onclick: () => set(value) },
      kbd(String(i + 1)), " ", names[value] ?? value));
  const premise = h("div", { class: "nli-text" }, h("h3", {}, T.nli_premise), h("p", { lang: "ko" }, item.premise));
  root.append(premise);

  let textarea = null;
  if (writing) {
    textarea = h("textarea", { class: "nli-hypothesis", rows: "3", lang: "ko", "aria-label": T.nli_hypothesis,
                               oninput: () => onChange() });
    textarea.value = typeof draft?.hypothesis === "string" ? draft.hypothesis : "";
    root.append(
      h("p", { class: "ws-instruction" }, target ? T.nli_write_instruction : T.nli_choose_target),
      h("div", { class: "choices", role: "group", "aria-label": T.nli_group }, buttons),
      h("label", { class: "nli-text" }, h("h3", {}, T.nli_hypothesis), textarea),
    );
  } else {
    root.append(
      h("div", { class: "nli-text" }, h("h3", {}, T.nli_hypothesis), h("p", { lang: "ko" }, item.hypothesis)),
      h("p", { class: "ws-instruction" }, T.nli_validate_instruction),
      h("div", { class: "choices", role: "group", "aria-label": T.nli_group }, buttons),
    );
  }

  function set(value) {
    if (target !== null && value !== target) return;
    label = value;
    buttons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.label === label)));
    onChange();
  }
  if (label !== null) set(label);

  const shortcuts = [[`1–${labels.length}`, T.nli_key_labels]];
  if (writing && !target) shortcuts.push([`Alt+1–${labels.length}`, T.nli_key_labels_alt]);

  return {
    shortcuts,
    handleKey(event) {
      const digit = digitOf(event);
      if (digit === null || digit < 1 || digit > labels.length) return false;
      // Plain digits are text inside the hypothesis box; Alt+digit picks the relation from anywhere.
      const fromAnywhere = event.altKey && !event.ctrlKey && !event.metaKey;
      if (fromAnywhere || (!isTyping(event.target) && plain(event))) {
        set(labels[digit - 1]);
        return true;
      }
      return false;
    },
    getPayload() {
      if (!writing) {
        if (!label) throw new Incomplete(T.nli_need_label);
        return { label };
      }
      const hypothesis = textarea.value.trim();
      if (!hypothesis) throw new Incomplete(T.nli_need_hypothesis);
      if (hypothesis === String(item.premise || "").trim()) throw new Incomplete(T.nli_copy);
      if (!label) throw new Incomplete(T.nli_need_label);
      return { hypothesis, label };
    },
    getDraft: () => ({ label, hypothesis: textarea ? textarea.value : undefined }),
    focus: () => (textarea ? textarea.focus() : document.activeElement?.blur?.()),
  };
}
