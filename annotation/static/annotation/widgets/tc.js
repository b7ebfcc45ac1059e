// Topic classification (YNAT): the headline and the project's topics on number keys. Pressing a topic
// ranks it next (1st, then the optional 2nd and 3rd); pressing a ranked topic again removes it.
import { Incomplete, digitOf, h, isTyping, kbd, plain } from "./_util.js";

/** The widget's draft from an annotation payload (a model's suggestion pre-fills the widget with it). */
export function draftFromPayload(payload) {
  return { ranked: [payload?.label, payload?.second, payload?.third].filter((l) => typeof l === "string") };
}

export function mount(root, { item, schema, strings: T, names = {}, draft, suggestion = null, onChange }) {
  const labels = schema.labels || [];
  let ranked = Array.isArray(draft?.ranked) ? draft.ranked.filter((l) => labels.includes(l)).slice(0, 3) : [];
  const rankNames = [T.first, T.second, T.third];

  const buttons = labels.map((label, i) =>
    h("button", { type: "button", class: "choice", dataset: { label, suggested: String(suggestion?.label === label) },
                  onclick: () => toggle(label) },
      i < 9 ? kbd(String(i + 1)) : null, " ", h("span", {}, names[label] ?? label), h("span", { class: "rank" })));
  const summary = h("p", { class: "tc-summary", "aria-live": "polite" });
  root.append(
    h("p", { class: "ws-instruction" }, T.tc_instruction),
    h("p", { class: "tc-headline", lang: "ko" }, item.title),
    h("div", { class: "choices", role: "group", "aria-label": T.tc_group }, buttons),
    summary,
  );

  function toggle(label) {
    ranked = ranked.includes(label) ? ranked.filter((l) => l !== label) : ranked.length < 3 ? [...ranked, label] : ranked;
    render();
    onChange();
  }

  function render() {
    buttons.forEach((button) => {
      const rank = ranked.indexOf(button.dataset.label);
      button.setAttribute("aria-pressed", String(rank >= 0));
      button.dataset.rank = rank >= 0 ? String(rank + 1) : "";
      button.querySelector(".rank").textContent = rank >= 0 ? ` ${rankNames[rank]}` : "";
    });
    summary.textContent = rankNames.map((name, i) => `${name}: ${ranked[i] === undefined ? T.none : names[ranked[i]] ?? ranked[i]}`)
      .join(" · ");
  }
  render();

  return {
    shortcuts: [[`1–${Math.min(labels.length, 9)}`, T.tc_key_digits], ["Backspace", T.tc_key_backspace]],
    handleKey(event) {
      if (isTyping(event.target) || !plain(event)) return false;
      const digit = digitOf(event);
      if (digit !== null && digit >= 1 && digit <= labels.length) {
        toggle(labels[digit - 1]);
        return true;
      }
      if (event.key === "Backspace" && ranked.length) {
        ranked = ranked.slice(0, -1);
        render();
        onChange();
        return true;
      }
      return false;
    },
    getPayload() {
      if (!ranked.length) throw new Incomplete(T.tc_need_first);
      return { label: ranked[0], second: ranked[1] ?? null, third: ranked[2] ?? null };
    },
    getDraft: () => ({ ranked }),
  };
}
