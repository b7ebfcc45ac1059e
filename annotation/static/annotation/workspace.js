// The annotator's workspace: fetches the next item from the queue API, mounts the task's widget,
// keeps drafts (local storage at once, the server a moment later), submits with retries, and counts
// the time spent. Submissions are idempotent on the server (one annotation per item, annotator and
// stage), so a retry after a network error updates the same annotation instead of adding one.
import { Incomplete, fmt, h, isTyping, kbd } from "./widgets/_util.js";

const config = JSON.parse(document.getElementById("workspace-config").textContent);
const T = config.strings;
const $ = (id) => document.getElementById(id);
const els = {
  workspace: $("workspace"), item: $("ws-item"), stage: $("ws-stage"), status: $("ws-status"), draft: $("ws-draft"),
  submit: $("ws-submit"), skip: $("ws-skip"), flag: $("ws-flag"), shortcuts: $("ws-shortcuts"),
  timer: $("ws-timer"), guideline: $("ws-guideline"), guidelineToggle: $("ws-guideline-toggle"),
  skipDialog: $("ws-skip-dialog"), flagDialog: $("ws-flag-dialog"),
};
const storageKey = (kind, id = "") => `goldset:${config.user}:${config.project}:${kind}${id === "" ? "" : ":" + id}`;
const DRAFT_DELAY_MS = 1200;
const RETRY_DELAYS_MS = [300, 1000, 3000];
const IDLE_AFTER_MS = 120_000;

let current = null; // {assignment, stage, itemId, widget, seconds}
let widgetModule = null;
let draftTimer = null;
let draftDirty = false; // changed since the server last stored the draft
let lastActivity = Date.now();
let busy = false;

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

class NetworkError extends Error {}

// One request at a time: a draft autosave never races the submission of the same item.
let queue = Promise.resolve();

let inFlight = 0;

/** Requests queued or running plus a scheduled autosave, on the page for tests and tools to wait on. */
function showBusy() {
  els.workspace.dataset.busy = String(inFlight + (draftTimer === null ? 0 : 1));
}

function api(method, url, body, options = {}) {
  inFlight += 1;
  showBusy();
  const run = queue.then(() => request(method, url, body, options)).finally(() => {
    inFlight -= 1;
    showBusy();
  });
  queue = run.catch(() => undefined);
  return run;
}

async function request(method, url, body, { keepalive = false } = {}) {
  let response;
  try {
    response = await fetch(url, {
      method, credentials: "same-origin", keepalive,
      headers: { "Accept": "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new NetworkError(String(error));
  }
  if (response.status >= 500) throw new NetworkError(`HTTP ${response.status}`);
  const data = response.status === 204 ? null : await response.json().catch(() => null);
  return { status: response.status, data };
}

function say(text, kind = "info") {
  els.status.textContent = text;
  els.status.dataset.kind = kind;
}

function detailOf(data) {
  if (!data) return "";
  if (typeof data.detail === "string") return data.field ? `${data.field}: ${data.detail}` : data.detail;
  return Object.entries(data).map(([key, value]) => `${key}: ${[].concat(value).join(" ")}`).join("; ");
}

// -- local storage: drafts and submissions not yet confirmed by the server ---------------------------

function readJSON(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null");
  } catch {
    return null;
  }
}

function writeJSON(key, value) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Storage full or disabled: the server draft still protects the work.
  }
}

const pendingKey = () => storageKey("pending");

function pendingSubmissions() {
  return readJSON(pendingKey()) || [];
}

function setPending(list) {
  writeJSON(pendingKey(), list.length ? list : null);
}

// -- time spent: seconds while the page is visible and the annotator active -------------------------

for (const type of ["keydown", "mousedown", "mousemove", "wheel", "touchstart"]) {
  document.addEventListener(type, () => { lastActivity = Date.now(); }, { passive: true });
}

setInterval(() => {
  if (!current || document.visibilityState !== "visible" || Date.now() - lastActivity > IDLE_AFTER_MS) return;
  current.seconds += 1;
  const s = Math.floor(current.seconds);
  els.timer.textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}, 1000);

// -- drafts --------------------------------------------------------------------------------------------

function draftUrl(assignment) {
  return `${config.api.assignment}${assignment}/draft/`;
}

function saveDraftLocally() {
  if (!current) return;
  writeJSON(storageKey("draft", current.assignment),
            { state: current.widget.getDraft(), seconds: current.seconds, savedAt: Date.now() });
}

function cancelDraftTimer() {
  clearTimeout(draftTimer);
  draftTimer = null;
  showBusy();
}

function onWidgetChange() {
  if (els.status.dataset.kind === "error") say(""); // the annotator is fixing what was refused
  saveDraftLocally();
  draftDirty = true;
  cancelDraftTimer();
  draftTimer = setTimeout(() => saveDraftOnServer(), DRAFT_DELAY_MS);
  showBusy();
}

async function saveDraftOnServer({ keepalive = false } = {}) {
  cancelDraftTimer();
  if (!current) return;
  const { assignment } = current;
  const body = { payload: current.widget.getDraft(), seconds_spent: current.seconds };
  draftDirty = false;
  try {
    const { status } = await api("PUT", draftUrl(assignment), body, { keepalive });
    if (status === 200) els.draft.textContent = `${T.draft_saved} ${new Date().toLocaleTimeString()}`;
  } catch {
    draftDirty = true;
    els.draft.textContent = T.draft_local;
  }
}

async function restoreDraft(assignment) {
  const local = readJSON(storageKey("draft", assignment));
  let server = null;
  try {
    const { status, data } = await api("GET", draftUrl(assignment));
    if (status === 200) server = data;
  } catch {
    // Offline: the local copy is all there is.
  }
  const serverAt = server ? Date.parse(server.updated_at) : -Infinity;
  if (local && local.savedAt >= serverAt) return { state: local.state, seconds: local.seconds || 0 };
  if (server) return { state: server.payload, seconds: server.seconds_spent || 0 };
  return null;
}

// -- the queue -------------------------------------------------------------------------------------------

function setButtons(enabled) {
  for (const button of [els.submit, els.skip, els.flag]) button.disabled = !enabled;
}

async function loadWidget() {
  if (!widgetModule) widgetModule = await import(config.widget);
  return widgetModule;
}

function renderShortcuts(widgetShortcuts) {
  const global = [
    ["Enter / Ctrl+Enter", T.key_submit], ["Alt+K", T.key_skip], ["Alt+F", T.key_flag],
    ["Alt+G", T.key_guideline],
  ];
  els.shortcuts.replaceChildren(...[...widgetShortcuts, ...global].flatMap(([keys, text]) => [
    h("dt", {}, keys.split(" / ").map((k, i) => [i ? " " : "", kbd(k)])), h("dd", {}, text)]));
}

async function refreshProgress() {
  try {
    const { status, data } = await api("GET", config.api.progress);
    if (status !== 200 || !data) return;
    $("ws-done").textContent = data.done;
    $("ws-remaining").textContent = data.remaining;
    $("ws-skipped").textContent = data.skipped;
  } catch {
    // Progress is informative only.
  }
}

/** The empty queue, told as it is: done, or the last items held by other annotators for now (they come back
 * when a lease runs out); with the way on to the annotator's next project that has work. */
async function showEmpty() {
  els.stage.textContent = "";
  renderShortcuts([]);
  let data = null;
  try {
    const response = await api("GET", config.api.progress);
    if (response.status === 200) data = response.data;
  } catch {
    // Without the counts the page still says the queue is empty and offers the project list.
  }
  if (data) {
    $("ws-done").textContent = data.done;
    $("ws-remaining").textContent = data.remaining;
    $("ws-skipped").textContent = data.skipped;
  }
  const held = data?.held_by_others || 0;
  const message = h("p", { class: "ws-done", id: "ws-empty", dataset: { reason: held ? "held" : "done" } },
                    held ? fmt(T.held_by_others, { n: held }) : T.done_all);
  const actions = h("p", { class: "ws-empty-actions" });
  if (held) {
    actions.append(h("button", { type: "button", class: "secondary", id: "ws-check-again", onclick: () => loadNext() },
                     T.check_again));
  }
  actions.append(data?.next_project
    ? h("a", { class: "button", id: "ws-next-project", href: data.next_project.url },
        fmt(T.next_project, { name: data.next_project.name }))
    : h("a", { id: "ws-projects", href: config.home }, T.back_to_projects));
  els.item.replaceChildren(message, actions);
}

/** The note above a pre-filled widget: whose suggestion it is, how sure, and the key that takes it as is. */
function suggestionBanner(suggestion) {
  const confidence = suggestion.confidence === null || suggestion.confidence === undefined
    ? "—" : `${Math.round(suggestion.confidence * 100)}%`;
  return h("p", { class: "ws-suggestion", id: "ws-suggestion", role: "note",
                  dataset: { model: suggestion.model, confidence: String(suggestion.confidence ?? "") } },
    h("span", { class: "suggested-tag" }, T.suggested_part), " ",
    fmt(T.suggestion_banner, { model: suggestion.model, confidence }), " ",
    kbd("Alt+A"), " ", T.suggestion_accept);
}

/** Show the next assignment: ``handed`` when a submission's answer carried it, else asked of ``next/``. */
async function loadNext(handed = null) {
  current = null;
  draftDirty = false;
  setButtons(false);
  els.item.replaceChildren(h("p", { class: "muted" }, T.loading));
  let response;
  try {
    response = handed ? { status: 200, data: handed } : await api("GET", config.api.next);
  } catch {
    say(T.offline_retry, "error");
    setTimeout(() => loadNext(), 3000);
    return;
  }
  const { status, data } = response;
  if (status === 403 && data && data.code === "guideline") {
    say(T.guideline_changed, "error");
    window.location.assign(config.gate);
    return;
  }
  if (status === 204) {
    await showEmpty();
    return;
  }
  if (status === 409) {  // every free place was being taken at that instant: not "nothing left", ask again
    say(T.queue_busy, "info");
    setTimeout(() => loadNext(), 1000);
    return;
  }
  if (status !== 200) {
    say(fmt(T.error, { detail: detailOf(data) }), "error");
    return;
  }
  const module = await loadWidget();
  const restored = await restoreDraft(data.assignment);
  const suggestion = data.suggestion || null;
  // A suggestion pre-fills the widget (in the widget's own draft shape); the annotator's saved work wins.
  const prefill = restored ? restored.state
    : suggestion ? (module.draftFromPayload ? module.draftFromPayload(suggestion.payload) : suggestion.payload) : null;
  const root = h("div", { class: `widget widget-${config.task}${suggestion ? " has-suggestion" : ""}`,
                          dataset: { item: String(data.item.id) } });
  els.item.replaceChildren(...(suggestion ? [suggestionBanner(suggestion)] : []), root);
  const widget = module.mount(root, {
    item: data.item.payload, itemId: data.item.id, stage: data.stage, schema: config.schema, strings: T,
    names: config.label_names,
    draft: prefill, suggestion: suggestion ? suggestion.payload : null, onChange: onWidgetChange, say,
  });
  current = { assignment: data.assignment, stage: data.stage, itemId: data.item.id, widget, suggestion,
              seconds: restored ? restored.seconds : 0 };
  els.workspace.dataset.assignment = String(data.assignment);
  els.workspace.dataset.suggestion = suggestion ? String(suggestion.id) : "";
  els.stage.textContent = config.stages[data.stage] || data.stage;
  renderShortcuts([...(widget.shortcuts || []), ...(suggestion ? [["Alt+A", T.key_accept]] : [])]);
  setButtons(true);
  if (restored) say(T.draft_restored);
  if (widget.focus) widget.focus();
  else document.activeElement?.blur?.();
}

// -- submitting, with retries ---------------------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** POST one submission until the server answers; a network error or a 5xx is retried with backoff. */
async function send(submission) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api("POST", config.api.annotations, submission.body);
    } catch (error) {
      if (!(error instanceof NetworkError) || attempt >= RETRY_DELAYS_MS.length) throw error;
      await sleep(RETRY_DELAYS_MS[attempt]);
    }
  }
}

/** Send what a previous page left unconfirmed (a reload while offline); returns true when all went. */
async function flushPending() {
  const list = pendingSubmissions();
  if (!list.length) return true;
  const left = [];
  for (const submission of list) {
    try {
      await send(submission);
      writeJSON(storageKey("draft", submission.assignment), null);
    } catch {
      left.push(submission);
    }
  }
  setPending(left);
  if (left.length) {
    say(T.offline_retry, "error");
    return false;
  }
  say(T.resent);
  return true;
}

/** Submit the widget's answer, or (``asSuggested``) the model's suggestion exactly as it was shown. */
async function submit({ asSuggested = false } = {}) {
  if (!current || busy) return;
  if (asSuggested && !current.suggestion) return;
  let payload;
  try {
    payload = asSuggested ? current.suggestion.payload : current.widget.getPayload();
  } catch (error) {
    if (error instanceof Incomplete) {
      say(fmt(T.invalid, { detail: error.message }), "error");
      return;
    }
    throw error;
  }
  busy = true;
  cancelDraftTimer();
  const submission = {
    assignment: current.assignment,
    body: { item: current.itemId, stage: current.stage, payload, seconds_spent: Math.round(current.seconds) },
  };
  // Kept until the server confirms: a reload or a lost connection cannot drop the answer.
  setPending([...pendingSubmissions().filter((s) => s.assignment !== submission.assignment), submission]);
  setButtons(false);
  try {
    const { status, data } = await send(submission);
    setPending(pendingSubmissions().filter((s) => s.assignment !== submission.assignment));
    if (status === 200 || status === 201) {
      writeJSON(storageKey("draft", submission.assignment), null);
      say(T.saved, "ok");
      await loadNext(data && data.next ? data.next : null);  // the submission's answer carries the next item
      refreshProgress();
    } else if (status === 409) {  // a lease that ran out on an item others completed meanwhile: move on
      writeJSON(storageKey("draft", submission.assignment), null);
      await loadNext();
      say(fmt(T.error, { detail: detailOf(data) }), "error");
      refreshProgress();
    } else {
      say(fmt(T.invalid, { detail: detailOf(data) }), "error");
      setButtons(true);
    }
  } catch {
    say(T.offline_retry, "error");
    retryLater();
  } finally {
    busy = false;
  }
}

function retryLater() {
  setTimeout(async () => {
    if (await flushPending()) {
      await loadNext();
      refreshProgress();
    } else {
      retryLater();
    }
  }, 5000);
}

// -- skip and flag ------------------------------------------------------------------------------------------------

function closeDraft(assignment) {
  cancelDraftTimer();
  writeJSON(storageKey("draft", assignment), null);
}

function openDialog(dialog) {
  if (!current || dialog.open) return;
  dialog.querySelector("form").reset();
  dialog.showModal();
}

els.skipDialog.addEventListener("close", async () => {
  if (els.skipDialog.returnValue !== "ok" || !current) return;
  const { assignment } = current;
  const reason = els.skipDialog.querySelector("[name=reason]").value;
  try {
    const { status, data } = await api("POST", `${config.api.assignment}${assignment}/skip/`, { reason });
    if (status !== 200) {
      say(fmt(T.error, { detail: detailOf(data) }), "error");
      return;
    }
  } catch {
    say(T.offline_retry, "error");
    return;
  }
  closeDraft(assignment);
  say(T.skipped);
  await loadNext();
  refreshProgress();
});

els.flagDialog.addEventListener("close", async () => {
  if (els.flagDialog.returnValue !== "ok" || !current) return;
  const { assignment, itemId } = current;
  const form = els.flagDialog.querySelector("form");
  const body = { item: itemId, kind: form.elements.kind.value, note: form.elements.note.value };
  try {
    const { status, data } = await api("POST", config.api.flags, body);
    if (status !== 201) {
      say(fmt(T.error, { detail: detailOf(data) }), "error");
      return;
    }
  } catch {
    say(T.offline_retry, "error");
    return;
  }
  closeDraft(assignment);
  say(T.flagged);
  await loadNext();
  refreshProgress();
});

els.flagDialog.addEventListener("keydown", (event) => {
  // Number keys pick the flag kind unless the note is being typed.
  const radios = [...els.flagDialog.querySelectorAll("[name=kind]")];
  const n = Number(event.key);
  if (!isTyping(event.target) || event.target.type === "radio") {
    if (n >= 1 && n <= radios.length) {
      radios[n - 1].checked = true;
      radios[n - 1].focus();
      event.preventDefault();
    }
  }
});

// -- the guideline drawer ------------------------------------------------------------------------------------------

function toggleGuideline(show = els.guideline.hidden) {
  els.guideline.hidden = !show;
  els.guidelineToggle.setAttribute("aria-expanded", String(show));
  if (show) els.guideline.focus?.();
}

els.guidelineToggle.addEventListener("click", () => toggleGuideline());
$("ws-guideline-close").addEventListener("click", () => toggleGuideline(false));

// -- keyboard ---------------------------------------------------------------------------------------------------------

document.addEventListener("keydown", (event) => {
  if (els.skipDialog.open || els.flagDialog.open) return; // the dialogs handle their own keys
  if (event.altKey && !event.ctrlKey && !event.metaKey) {
    const action = { KeyK: () => openDialog(els.skipDialog), KeyF: () => openDialog(els.flagDialog),
                     KeyG: () => toggleGuideline(),
                     KeyA: current?.suggestion ? () => submit({ asSuggested: true }) : null }[event.code];
    if (action) {
      event.preventDefault();
      action();
      return;
    }
  }
  if (event.key === "Escape" && !els.guideline.hidden) {
    toggleGuideline(false);
    return;
  }
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    submit();
    return;
  }
  if (!current) return;
  // WCAG 2.1.4: with single-key shortcuts turned off, a printable key without Alt, Ctrl or Meta does nothing
  // outside a text field (Enter, Space on a focused button, arrows and Tab keep their usual meaning).
  const singleKey = event.key.length === 1 && event.key !== " " && !event.altKey && !event.ctrlKey && !event.metaKey;
  if (!config.single_keys && singleKey && !isTyping(event.target)) return;
  // A widget answers true when it handled the key, or "submit" when the key also submits (RE's Enter).
  const handled = current.widget.handleKey?.(event);
  if (handled) {
    event.preventDefault();
    if (handled === "submit") submit();
    return;
  }
  // Enter on a widget's choice button submits too (the choice is already made by then); on other
  // buttons and links it keeps its usual meaning.
  const onButton = event.target instanceof Element && event.target.matches("button:not(.choice), a, summary");
  if (event.key === "Enter" && !event.shiftKey && !isTyping(event.target) && !onButton) {
    event.preventDefault();
    submit();
  }
});

els.submit.addEventListener("click", () => submit());
els.skip.addEventListener("click", () => openDialog(els.skipDialog));
els.flag.addEventListener("click", () => openDialog(els.flagDialog));

// Leaving the page (reload, closing the tab, a dropped connection's recovery): push unsaved changes now.
window.addEventListener("pagehide", () => {
  if (current) {
    saveDraftLocally();
    if (draftDirty) saveDraftOnServer({ keepalive: true });
  }
});

(async () => {
  await flushPending();
  await loadNext();
})();
