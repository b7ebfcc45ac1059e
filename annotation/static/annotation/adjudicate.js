// Adjudication with the task's own widget: the annotators' widget of the last stage, in a review mode that
// starts from the gold so far or from the annotation the manager picks, and whose answer becomes the gold
// payload when the form is sent (the JSON box stays available for anything the widget cannot express).
import { Incomplete, h } from "./widgets/_util.js";

const config = JSON.parse(document.getElementById("adjudicate-config").textContent);
const form = document.getElementById("adjudication");
const root = document.getElementById("adj-widget");
const status = document.getElementById("adj-status");
const json = document.getElementById("payload");
const jsonBox = document.getElementById("adj-json");
const editChoice = form.querySelector("input[name=choice][value=edit]");
const module = await import(config.widget);
let widget = null;
let remounting = false;

function say(message, kind = "") {
  status.textContent = message || "";
  status.className = `ws-status ${kind}`;
}

function mount(payload, { focus = false } = {}) {
  remounting = true;
  root.replaceChildren();
  root.dataset.item = String(config.item.id);
  const body = h("div", {});
  root.append(body);
  widget = module.mount(body, {
    item: config.item, stage: config.stage, schema: config.schema, strings: config.strings, names: config.label_names,
    draft: payload ? (module.draftFromPayload ? module.draftFromPayload(payload) : payload) : null,
    suggestion: null, say, onChange: () => { if (!remounting) editChoice.checked = true; },
  });
  remounting = false;
  say("");
  if (focus) (widget.focus ?? (() => root.focus()))();
}

// Picking an annotator's answer fills the widget with it; changing anything in the widget then makes the
// widget's answer the decision.
for (const radio of form.querySelectorAll("input[name=choice]")) {
  radio.addEventListener("change", () => {
    const payload = config.annotations[radio.value];
    if (payload) mount(payload, { focus: true });
  });
}

// The widget's keys work while the focus is in it (or nowhere); the form's own fields keep theirs.
root.tabIndex = -1;
document.addEventListener("keydown", (event) => {
  if (!widget || (!root.contains(document.activeElement) && document.activeElement !== document.body)) return;
  if (widget.handleKey?.(event)) event.preventDefault();
  else if (event.key === "Enter" && !root.contains(event.target)) event.preventDefault(); // no accidental save
});

form.addEventListener("submit", (event) => {
  if (!editChoice.checked || jsonBox.open) return; // an annotation as it is, or the JSON typed by hand
  try {
    json.value = JSON.stringify(widget.getPayload());
  } catch (error) {
    if (!(error instanceof Incomplete)) throw error;
    event.preventDefault();
    say(error.message, "error");
  }
});

mount(config.initial);
root.dataset.ready = "1";
