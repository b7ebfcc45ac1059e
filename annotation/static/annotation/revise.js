// Revising one's own answer with the task's own widget, started from the answer as it was submitted; the
// widget's answer is sent as the form's payload (the server validates it like a submission).
import { Incomplete, h } from "./widgets/_util.js";

const config = JSON.parse(document.getElementById("revise-config").textContent);
const form = document.getElementById("revision");
const root = document.getElementById("revise-widget");
const status = document.getElementById("revise-status");
const payload = document.getElementById("payload");
const module = await import(config.widget);

function say(message, kind = "") {
  status.textContent = message || "";
  status.className = `ws-status ${kind}`;
}

root.dataset.item = String(config.item.id);
const body = h("div", {});
root.append(body);
const widget = module.mount(body, {
  item: config.item, stage: config.stage, schema: config.schema, strings: config.strings,
  draft: module.draftFromPayload ? module.draftFromPayload(config.initial) : config.initial,
  suggestion: null, say, onChange: () => say(""),
});

// The widget's keys work while the focus is in it (or nowhere); Enter outside it never saves by accident.
root.tabIndex = -1;
document.addEventListener("keydown", (event) => {
  if (!root.contains(document.activeElement) && document.activeElement !== document.body) return;
  if (widget.handleKey?.(event)) event.preventDefault();
  else if (event.key === "Enter" && !root.contains(event.target)) event.preventDefault();
});

form.addEventListener("submit", (event) => {
  try {
    payload.value = JSON.stringify(widget.getPayload());
  } catch (error) {
    if (!(error instanceof Incomplete)) throw error;
    event.preventDefault();
    say(error.message, "error");
  }
});
root.dataset.ready = "1";
