// Semantic textual similarity: two sentences side by side and a 0–5 score on the project's grid
// (integers, or half points when the schema's step is 0.5).
import { Incomplete, digitOf, h, isTyping, plain } from "./_util.js";

export function mount(root, { item, schema, strings: T, names = {}, draft, suggestion = null, onChange }) {
  const low = Number(schema.min ?? 0);
  const high = Number(schema.max ?? 5);
  const step = Number(schema.step ?? 1) || 1;
  const values = [];
  for (let v = low; v <= high + 1e-9; v += step) values.push(Math.round(v * 1000) / 1000);
  let score = values.includes(draft?.score) ? draft.score : null;

  // An integer score is its own key (the shortcut panel says so): the button shows the number once.
  const buttons = values.map((value) =>
    h("button", { type: "button", class: "choice score",
                  "aria-keyshortcuts": Number.isInteger(value) ? String(value) : null,
                  dataset: { score: String(value), suggested: String(suggestion?.score === value) },
                  onclick: () => set(value) },
      String(value), names[String(value)] ? h("small", { class: "score-name" }, names[String(value)]) : null));
  root.append(
    h("p", { class: "ws-instruction" }, T.sts_instruction),
    h("div", { class: "sts-pair" },
      h("figure", {}, h("figcaption", {}, T.sts_sentence1), h("p", { lang: "ko", class: "sts-sentence" }, item.sentence1)),
      h("figure", {}, h("figcaption", {}, T.sts_sentence2), h("p", { lang: "ko", class: "sts-sentence" }, item.sentence2))),
    h("div", { class: "choices scores", role: "group", "aria-label": T.sts_group }, buttons),
  );

  function set(value) {
    score = value;
    buttons.forEach((b) => b.setAttribute("aria-pressed", String(Number(b.dataset.score) === score)));
    onChange();
  }
  if (score !== null) set(score);

  const shortcuts = [[`${low}–${high}`, T.sts_key_digits], ["← / →", T.sts_key_arrows]];
  if (step < 1) shortcuts.splice(1, 0, [".", T.sts_key_half]);

  return {
    shortcuts,
    handleKey(event) {
      if (isTyping(event.target) || !plain(event)) return false;
      const digit = digitOf(event);
      if (digit !== null && values.includes(digit)) {
        set(digit);
        return true;
      }
      if (event.key === "." && step < 1 && score !== null && values.includes(Math.floor(score) + 0.5)) {
        set(Math.floor(score) + 0.5);
        return true;
      }
      if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        const index = score === null ? (event.key === "ArrowLeft" ? values.length : -1) : values.indexOf(score);
        const next = values[Math.max(0, Math.min(values.length - 1, index + (event.key === "ArrowLeft" ? -1 : 1)))];
        set(next);
        return true;
      }
      return false;
    },
    getPayload() {
      if (score === null) throw new Incomplete(T.sts_need_score);
      return { score };
    },
    getDraft: () => ({ score }),
  };
}
