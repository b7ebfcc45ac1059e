// Reading comprehension in two stages. Writing: a question, its type, and the answer span selected in
// the passage (for an unanswerable question, the plausible span instead). Validation: the question;
// the annotator selects their own answer or marks it unanswerable. Offsets are code points.
import { SpanText } from "./_spans.js";
import { Incomplete, digitOf, h, isTyping, kbd, plain } from "./_util.js";

const UNANSWERABLE = 3;

function validSpan(span, chars) {
  return span && Number.isInteger(span.start) && typeof span.text === "string" && span.text
    && chars.slice(span.start, span.start + Array.from(span.text).length).join("") === span.text ? span : null;
}

/** The widget's draft from a validation payload (a model's suggested answer pre-fills the widget with it). */
export function draftFromPayload(payload) {
  return { answer: payload?.answer ?? null, unanswerable: payload?.answer === null };
}

export function mount(root, { item, stage, schema, strings: T, names = {}, draft, suggestion = null, onChange }) {
  const writing = stage === "writing";
  const types = Object.entries(schema.question_types || { 1: "paraphrase", 2: "multi-sentence reasoning",
                                                           3: "unanswerable" })
    .map(([key, name]) => [Number(key), name]).sort((a, b) => a[0] - b[0]);
  const passage = new SpanText(item.context, { label: T.mrc_passage, strings: T, onChange: () => {} });
  let qtype = types.some(([key]) => key === draft?.question_type) ? draft.question_type : null;
  let answer = validSpan(draft?.answer, passage.chars);
  let plausible = validSpan(draft?.plausible, passage.chars);
  let unanswerable = !writing && draft?.unanswerable === true;

  const answerView = h("p", { class: "mrc-answer-view", "aria-live": "polite" });
  root.append(h("h3", { class: "mrc-title", lang: "ko" }, item.title));

  let question = null;
  const typeButtons = types.map(([key, name]) =>
    // One shortcut badge per button: the type's number is already in Alt+<number>.
    h("button", { type: "button", class: "choice", dataset: { qtype: String(key) }, "aria-keyshortcuts": `Alt+${key}`,
                  onclick: () => setType(key) },
      kbd(`Alt+${key}`), " ", names[String(key)] ?? name));
  if (writing) {
    question = h("textarea", { class: "mrc-question", rows: "2", lang: "ko", "aria-label": T.mrc_question,
                               oninput: () => onChange() });
    question.value = typeof draft?.question === "string" ? draft.question : "";
    root.append(
      h("p", { class: "ws-instruction" }, T.mrc_write_instruction),
      h("div", { class: "mrc-passage" }, passage.el),
      h("div", { class: "mrc-fields" },
        h("label", {}, h("strong", {}, T.mrc_question), question),
        h("div", {}, h("strong", {}, T.mrc_question_type), h("div", { class: "choices", role: "group", "aria-label": T.mrc_question_type }, typeButtons))),
    );
  } else {
    root.append(
      h("p", { class: "mrc-question-view", lang: "ko" }, `${T.mrc_question}: ${item.question}`),
      h("p", { class: "ws-instruction" }, T.mrc_validate_instruction),
      h("div", { class: "mrc-passage" }, passage.el),
      h("div", { class: "choices" },
        h("button", { type: "button", class: "choice mrc-unanswerable", onclick: () => toggleUnanswerable() },
          kbd("U"), " ", T.mrc_unanswerable)),
    );
  }
  root.append(answerView);

  function spanFromSelection() {
    const sel = passage.selection();
    if (!sel) return null;
    let { start, end } = sel;
    while (start < end && /\s/u.test(passage.chars[start])) start++;
    while (end > start && /\s/u.test(passage.chars[end - 1])) end--;
    return start < end ? { text: passage.text(start, end), start } : null;
  }

  function useSelection() {
    const span = spanFromSelection();
    if (!span) return;
    if (writing && qtype === UNANSWERABLE) plausible = span;
    else {
      answer = span;
      unanswerable = false;
    }
    passage.clearSelection();
    changed();
  }

  function setType(key) {
    qtype = key;
    // The span already chosen keeps its place: the answer of a type 1/2 question is the plausible
    // answer of a type 3 one, and the other way round.
    if (key === UNANSWERABLE && answer) [plausible, answer] = [answer, null];
    if (key !== UNANSWERABLE && plausible && !answer) [answer, plausible] = [plausible, null];
    if (key !== UNANSWERABLE) plausible = null;
    changed();
  }

  function toggleUnanswerable() {
    unanswerable = !unanswerable;
    if (unanswerable) answer = null;
    changed();
  }

  function changed() {
    render();
    onChange();
  }

  function spanLabel(span) {
    return span ? `“${span.text}” [${span.start}, ${span.start + Array.from(span.text).length})` : T.none;
  }

  function render() {
    const marks = [];
    for (const [span, cls] of [[answer, "mrc-answer"], [plausible, "mrc-plausible"]]) {
      if (span) marks.push({ start: span.start, end: span.start + Array.from(span.text).length, classes: [cls] });
    }
    passage.setMarks(marks);
    typeButtons.forEach((b) => b.setAttribute("aria-pressed", String(Number(b.dataset.qtype) === qtype)));
    root.querySelector(".mrc-unanswerable")?.setAttribute("aria-pressed", String(unanswerable));
    // Still the model's answer (the same span, or both "unanswerable")?
    const fromModel = !writing && suggestion !== null && (suggestion.answer === null ? unanswerable
      : !unanswerable && answer !== null && answer.start === suggestion.answer.start && answer.text === suggestion.answer.text);
    const rows = [h("span", { class: fromModel ? "suggested" : null, dataset: { suggested: String(fromModel) } },
                    h("strong", {}, T.mrc_answer), ": ",
                    h("span", { lang: "ko", class: "mrc-answer-text" }, unanswerable ? T.mrc_unanswerable : spanLabel(answer)),
                    fromModel ? [" ", h("span", { class: "suggested-tag" }, T.suggested_part)] : null)];
    if (writing && qtype === UNANSWERABLE) {
      rows.push(" · ", h("span", {}, h("strong", {}, T.mrc_plausible), ": ",
                                 h("span", { lang: "ko", class: "mrc-plausible-text" }, spanLabel(plausible))));
    }
    answerView.replaceChildren(...rows);
  }
  render();

  const shortcuts = [["← / → / Shift+← / Shift+→", T.mrc_key_select], ["A", T.mrc_key_answer]];
  if (writing) shortcuts.push([`Alt+1–${types.length}`, T.mrc_key_types]);
  else shortcuts.push(["U", T.mrc_key_unanswerable]);

  return {
    shortcuts,
    handleKey(event) {
      const digit = digitOf(event);
      if (writing && digit !== null && event.altKey && !event.ctrlKey && types.some(([key]) => key === digit)) {
        setType(digit);
        return true;
      }
      if (isTyping(event.target)) return false;
      if (plain(event) && event.key.toLowerCase() === "a") {
        useSelection();
        return true;
      }
      if (!writing && plain(event) && event.key.toLowerCase() === "u") {
        toggleUnanswerable();
        return true;
      }
      return passage.handleKey(event);
    },
    getPayload() {
      if (!writing) {
        if (!answer && !unanswerable) throw new Incomplete(T.mrc_need_answer_or_unanswerable);
        return { answer: unanswerable ? null : answer };
      }
      const text = question.value.trim();
      if (!text) throw new Incomplete(T.mrc_need_question);
      if (qtype === null) throw new Incomplete(T.mrc_need_type);
      if (qtype === UNANSWERABLE) {
        if (!plausible) throw new Incomplete(T.mrc_need_plausible);
        return { question: text, question_type: qtype, answer: null, plausible };
      }
      if (!answer) throw new Incomplete(T.mrc_need_answer);
      return { question: text, question_type: qtype, answer, plausible: null };
    },
    getDraft: () => ({ question: question ? question.value : undefined, question_type: qtype, answer, plausible,
                       unanswerable }),
    focus: () => (question ? question.focus() : passage.el.focus()),
  };
}
