// The hosted form page's script (plain browser JavaScript, no build step). Without it the page is one
// long HTML form; with it: one page at a time, per-page validation, partial saves that survive
// leaving (the response id and answers are kept in localStorage per form), file uploads,
// a signature pad, and a thank-you state or redirect after submitting.

// Framed by an embed (/embed.js on another site): the page's height goes to the parent whenever it
// changes, so the frame fits the form. Only the height is posted, to any parent: it tells nothing.
// embed.js answers each height with "formsvc:embedded": from then on the parent takes the whole page to
// the form's redirect, and the frame does not go there itself (its own navigation could win the race and
// leave the page behind with the site shown inside the frame).
const embedding = (() => {
  "use strict";
  const state = { parentTakesRedirects: false };
  if (window.parent === window) return state;
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent || !event.data || event.data.type !== "formsvc:embedded") return;
    state.parentTakesRedirects = true;
    document.documentElement.dataset.formsvcEmbedded = "";
  });
  if (typeof ResizeObserver !== "function") return state;
  let posted = -1;
  const post = () => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height === posted) return;
    posted = height;
    window.parent.postMessage({ type: "formsvc:height", height }, "*");
  };
  new ResizeObserver(post).observe(document.documentElement);
  post();
  return state;
})();

(() => {
  "use strict";

  const configElement = document.getElementById("hf-config");
  const form = document.getElementById("hf-form");
  if (!configElement || !form) return;
  const config = JSON.parse(configElement.textContent);
  document.documentElement.classList.add("hf-js");
  form.noValidate = true; // our own messages, page by page
  // The proof-of-work widget's solution (captcha.ts), which the completion carries.
  let captchaPayload = "";
  form.querySelector("altcha-widget")?.addEventListener("verified", (event) => (captchaPayload = event.detail.payload));

  // The page language's messages, formatted by the server as templates whose "\0name\0" parts are
  // arguments (page-messages.ts): numbers in them are written as the page's language writes them.
  const numbers = new Intl.NumberFormat(document.documentElement.lang || undefined);
  function text(key, values = {}) {
    return (config.messages[key] || key)
      .split("\u0000")
      .map((part, i) => (i % 2 === 0 ? part : typeof values[part] === "number" ? numbers.format(values[part]) : String(values[part] ?? "")))
      .join("");
  }

  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

  // A form with logic rules comes one page at a time for browsers without script (logic-steps.ts): the
  // other pages and the blocks the rules hide wait in templates, the buttons post. Here every block is on
  // the page, the rules show and hide them as answers change (form-logic.js, the server's own evaluator),
  // and the buttons move between pages.
  const logic = config.logic && globalThis.formsvcLogic ? { doc: config.logic, run: globalThis.formsvcLogic, state: null } : null;
  for (let later = $$("template.hf-later", form); later.length; later = $$("template.hf-later", form)) {
    for (const template of later) template.replaceWith(template.content);
  }
  for (const carried of $$(".hf-carried", form)) carried.remove();
  for (const id of ["hf-back", "hf-next"]) {
    const button = document.getElementById(id);
    button.type = "button";
    button.removeAttribute("name");
  }
  const pages = $$(".hf-page", form);
  const summary = $("#hf-summary");
  const buttons = { back: $("#hf-back"), next: $("#hf-next"), submit: $("#hf-submit") };
  const storageKey = `formsvc:response:${config.formId}`;
  let current = 0;
  let busy = false;
  let responseId = "";
  let calculated = {}; // a completion's calculated fields the thank-you screen recalls
  let finished = false; // submitted: nothing more is remembered
  let rememberTimer = 0;

  // ---- questions, read from the page ----------------------------------------------------------
  const questions = $$(".hf-q[data-key]", form).map((el) => ({
    el,
    key: el.dataset.key,
    type: el.dataset.type,
    answer: el.dataset.answer, // the answer's shape: text, number, steps, option, options, uploads, consent
    required: el.dataset.required === "true",
    question: el.dataset.question || "",
    page: pages.findIndex((page) => page.contains(el)),
    error: $(".hf-error", el),
    files: [], // FILE: [{uploadId, name, size}]
    pending: new Set(), // FILE: uploads in flight
    pad: null, // SIGNATURE: see setupPad
  }));

  const fieldOf = (q) => $("input:not([type=radio]):not([type=checkbox]), select, textarea", q.el);

  // Answers are read by their shape (question-types.ts), so a new type of a known shape needs nothing here.
  function valueOf(q) {
    switch (q.answer) {
      case "steps": {
        const checked = $("input:checked", q.el);
        return checked ? Number(checked.value) : undefined;
      }
      case "option": {
        // Radios, or a select (DROPDOWN).
        const choice = $("input:checked", q.el) || $("select", q.el);
        return choice && choice.value !== "" ? choice.value : undefined;
      }
      case "options": {
        const ids = $$("input:checked", q.el).map((input) => input.value);
        return ids.length ? ids : undefined;
      }
      case "consent":
        return $("input:checked", q.el) ? true : undefined;
      case "grid": {
        // Row id → column id, or column ids when a row takes several (checkboxes).
        const rows = {};
        for (const input of $$("input:checked", q.el)) {
          const row = input.dataset.row;
          if (input.type === "checkbox") (rows[row] = rows[row] || []).push(input.value);
          else rows[row] = input.value;
        }
        return Object.keys(rows).length ? rows : undefined;
      }
      case "ranking": {
        // One select per place, in place order; places left empty are no part of the answer.
        const ids = $$("select", q.el).map((select) => select.value).filter((id) => id !== "");
        return ids.length ? ids : undefined;
      }
      case "uploads":
        if (q.pad) return q.pad.uploadId ? [q.pad.uploadId] : undefined;
        return q.files.length ? q.files.map((f) => f.uploadId) : undefined;
      case "number": {
        const text = fieldOf(q).value.trim();
        return text === "" || !Number.isFinite(Number(text)) ? undefined : Number(text);
      }
      default: {
        const text = fieldOf(q).value.trim();
        return text === "" ? undefined : text;
      }
    }
  }

  function setValue(q, value) {
    if (value === undefined || value === null) return;
    if (q.answer === "uploads") return; // restored from their own stored state
    if (q.answer === "grid") {
      for (const input of $$("input", q.el)) input.checked = [].concat(value[input.dataset.row] ?? []).includes(input.value);
      return;
    }
    if (q.answer === "ranking") {
      $$("select", q.el).forEach((select, i) => (select.value = value[i] ?? ""));
      return;
    }
    const boxes = $$("input[type=radio], input[type=checkbox]", q.el);
    if (boxes.length === 0) {
      fieldOf(q).value = String(value);
      return;
    }
    const chosen = new Set((Array.isArray(value) ? value : [value]).map(String));
    for (const input of boxes) input.checked = chosen.has(input.value);
    q.el.dispatchEvent(new Event("change")); // what counts the chosen options hears of it
  }

  /** Every answer given, shown or not: what the rules are evaluated over. */
  function givenAnswers() {
    const out = {};
    for (const q of questions) {
      const value = valueOf(q);
      if (value !== undefined) out[q.key] = value;
    }
    return out;
  }

  /** Shows and hides blocks as the rules say for the answers now, and marks what they require. */
  function applyLogic() {
    if (!logic) return;
    logic.state = logic.run.evaluateLogic(logic.doc, givenAnswers());
    for (const el of $$("[data-block]", form)) el.hidden = logic.state.hidden.has(el.dataset.block);
    for (const q of questions) {
      q.required = logic.state.required.has(q.key);
      const label = $(".hf-label", q.el);
      const mark = $(".hf-required", label);
      if (q.required && !mark) {
        const required = document.createElement("span");
        required.className = "hf-required";
        required.textContent = text("required");
        label.append(" ", required);
      }
      if (!q.required && mark) mark.remove();
    }
  }

  // Texts that name answers ({{key}}, recall.ts) carry their own words (data-recall): they are filled in
  // as answers change, by the server's own code (form-logic.js), as text, never markup; the thank-you
  // screen's also with the calculated fields the completion answered with.
  const recall = config.recall && globalThis.formsvcLogic ? config.recall : null;
  const recalled = new WeakMap();
  function applyRecall(calculated) {
    if (!recall) return;
    const values = globalThis.formsvcLogic.recallValues(recall.blocks, givenAnswers(), hiddenValues(), calculated);
    for (const el of $$("[data-recall]")) {
      const filled = globalThis.formsvcLogic.fillRecall(el.dataset.recall, values);
      if (recalled.get(el) === filled) continue;
      recalled.set(el, filled);
      el.replaceChildren(...filled.split("\n").flatMap((line, i) => (i === 0 ? [line] : [document.createElement("br"), line])));
    }
  }

  /** The page after the current one (the rules' path with logic); undefined on the last. */
  function nextIndex() {
    if (logic) return logic.run.nextPageOf(logic.doc, logic.state, current);
    return current < pages.length - 1 ? current + 1 : undefined;
  }

  function previousIndex() {
    if (logic) return logic.run.previousPageOf(logic.doc, logic.state, current);
    return current > 0 ? current - 1 : undefined;
  }

  /** The answers sent: those of the questions shown (the server drops any other). */
  function answers() {
    const out = {};
    for (const q of questions) {
      if (q.el.hidden) continue;
      const value = valueOf(q);
      if (value !== undefined) out[q.key] = value;
    }
    return out;
  }

  function hiddenValues() {
    const out = {};
    for (const name of config.hiddenFields) {
      const input = form.elements.namedItem(`_hidden.${name}`);
      if (input && input.value) out[name] = input.value;
    }
    return out;
  }

  // ---- messages ---------------------------------------------------------------------------------
  function showError(q, message) {
    q.error.textContent = message;
    for (const input of $$("input, select, textarea", q.el)) input.setAttribute("aria-invalid", "true");
  }

  function clearError(q) {
    q.error.textContent = "";
    for (const input of $$("[aria-invalid]", q.el)) input.removeAttribute("aria-invalid");
  }

  function showSummary(message) {
    summary.textContent = "";
    if (!message) return;
    const p = document.createElement("p");
    p.textContent = message;
    summary.append(p);
    summary.focus();
  }

  function focusQuestion(q) {
    const target = $("input:not([type=hidden]), select, textarea, canvas", q.el);
    q.el.scrollIntoView({ block: "center" });
    if (target) target.focus({ preventScroll: true });
  }

  /** A problem the server names as shown next to its question: "must be ..." reads "Must be ...". */
  const shownProblem = (message) => message.charAt(0).toUpperCase() + message.slice(1);

  /** Shows the problems the server named by key (its `fields`) next to their questions; false when it named none here. */
  function showFieldProblems(fields) {
    let first = null;
    for (const field of Array.isArray(fields) ? fields : []) {
      const q = questions.find((x) => x.key === field.key);
      if (!q || typeof field.message !== "string") continue;
      showError(q, shownProblem(field.message));
      first = first || q;
    }
    if (!first) return false;
    showPage(first.page, false);
    focusQuestion(first);
    return true;
  }

  // ---- validation, page by page -----------------------------------------------------------------
  function problemOf(q) {
    if (q.type === "FILE" && q.pending.size > 0) return null; // waited for before saving
    if (q.type === "SIGNATURE") {
      return q.required && !q.pad.hasInk ? text("signatureRequired") : null;
    }
    const value = valueOf(q);
    if (q.required && value === undefined) return text("questionRequired");
    const field = fieldOf(q);
    if (field && field.value.trim() !== "" && !field.checkValidity()) {
      const problem = { EMAIL: "enterEmail", URL: "enterUrl", NUMBER: "enterNumber" }[q.type];
      return problem ? text(problem) : field.validationMessage;
    }
    return null;
  }

  /** Checks the questions of some pages; shows every problem and focuses the first. */
  function validate(pageIndexes) {
    let first = null;
    for (const q of questions) {
      if (!pageIndexes.includes(q.page)) continue;
      const problem = q.el.hidden ? null : problemOf(q);
      if (problem) {
        showError(q, problem);
        first = first || q;
      } else clearError(q);
    }
    if (first) {
      showPage(first.page, false);
      focusQuestion(first);
    }
    return !first;
  }

  // ---- pages ------------------------------------------------------------------------------------
  const progress = $("#hf-progress");
  /**
   * "Page n of m" over the pages the respondent goes through: with logic, those of the rules' path for
   * the answers so far that show anything (a jump that passes pages over shortens it, as it is chosen).
   */
  function showProgress() {
    if (!progress || !config.showProgressBar) return;
    const path = logic ? logic.state.path.filter((p) => logic.run.pageShows(logic.doc, logic.state, p)) : pages.map((_, i) => i);
    const at = Math.max(0, path.indexOf(current)) + 1;
    const of = Math.max(path.length, at);
    progress.hidden = false;
    $("#hf-progress-label").textContent = text(config.oneQuestion ? "questionOf" : "pageOf", { page: at, pages: of });
    const track = $(".hf-progress-track", progress);
    track.setAttribute("aria-valuenow", String(at));
    track.setAttribute("aria-valuemax", String(of));
    $(".hf-progress-fill", progress).style.width = `${(at / of) * 100}%`;
  }

  /**
   * Back, Next or Submit as the current page's place on the path says. Answers move it (a rule that
   * reveals or passes over a later page makes this page the last, or no longer the last), so it is
   * worked out again after each.
   */
  function updateButtons() {
    const last = nextIndex() === undefined;
    buttons.back.hidden = previousIndex() === undefined;
    buttons.next.hidden = last;
    buttons.submit.hidden = !last;
  }

  /** Shows page `index`; none (no page after or before this one, as the rules now say) stays on this one. */
  function showPage(index, moveFocus = true) {
    if (index !== undefined) current = Math.max(0, Math.min(pages.length - 1, index));
    pages.forEach((page, i) => page.classList.toggle("hf-current", i === current));
    updateButtons();
    showProgress();
    if (moveFocus) {
      window.scrollTo(0, 0);
      // One question at a time (one-at-a-time.js) focuses the question itself, and says so by cancelling.
      const page = new CustomEvent("formsvc:page", { cancelable: true, detail: { page: pages[current] } });
      if (form.dispatchEvent(page)) pages[current].focus({ preventScroll: true });
    }
  }

  function setBusy(on) {
    busy = on;
    form.setAttribute("aria-busy", on ? "true" : "false");
    for (const button of Object.values(buttons)) button.disabled = on;
  }

  // ---- remembering progress in this browser -----------------------------------------------------
  function readStored() {
    try {
      const stored = JSON.parse(localStorage.getItem(storageKey) || "null");
      return stored && typeof stored === "object" ? stored : null;
    } catch {
      return null;
    }
  }

  function remember() {
    if (!config.saveProgress || finished) return;
    const signatures = {};
    for (const q of questions) {
      if (q.type === "SIGNATURE" && q.pad.uploadId) signatures[q.key] = { uploadId: q.pad.uploadId, image: q.pad.image, typed: q.pad.typed.value };
    }
    const files = {};
    for (const q of questions) if (q.type === "FILE" && q.files.length) files[q.key] = q.files;
    const stored = { responseId, version: config.version, answers: answers(), hidden: hiddenValues(), files, signatures, savedAt: new Date().toISOString() };
    try {
      localStorage.setItem(storageKey, JSON.stringify(stored));
    } catch {
      // Storage full or disabled: progress is still saved on the server for this visit.
    }
  }

  function forget() {
    clearTimeout(rememberTimer);
    try {
      localStorage.removeItem(storageKey);
    } catch {
      // nothing to forget
    }
  }

  function restore(stored) {
    responseId = typeof stored.responseId === "string" ? stored.responseId : "";
    const saved = stored.answers || {};
    for (const q of questions) {
      if (q.type === "FILE" && Array.isArray(stored.files?.[q.key])) {
        q.files = stored.files[q.key].filter((f) => f && typeof f.uploadId === "string");
        renderFiles(q);
      } else if (q.type === "SIGNATURE" && stored.signatures?.[q.key]) {
        q.pad.restore(stored.signatures[q.key]);
      } else if (q.key in saved) {
        setValue(q, saved[q.key]);
      }
    }
    // The link's own hidden values win over remembered ones.
    for (const name of config.hiddenFields) {
      const input = form.elements.namedItem(`_hidden.${name}`);
      const remembered = stored.hidden?.[name];
      if (input && !input.value && typeof remembered === "string") input.value = remembered;
    }
    $("#hf-resume").hidden = !(responseId || Object.keys(saved).length);
  }

  // ---- uploads ----------------------------------------------------------------------------------
  async function upload(blob, name) {
    const tooLarge = text("fileTooLarge", { name, megabytes: config.maxUploadBytes / 1048576 });
    if (blob.size > config.maxUploadBytes) throw new Error(tooLarge);
    const body = new FormData();
    body.append("file", blob, name);
    const res = await fetch(config.uploadsUrl, { method: "POST", body });
    const data = await res.json().catch(() => ({}));
    if (res.status === 413) throw new Error(tooLarge);
    if (res.status === 429) throw new Error(text("tooManyAttempts"));
    if (!res.ok) throw new Error(text("uploadFailed", { name }));
    return data;
  }

  const megabytes = new Intl.NumberFormat(document.documentElement.lang || undefined, { style: "unit", unit: "megabyte", maximumFractionDigits: 1 });
  const kilobytes = new Intl.NumberFormat(document.documentElement.lang || undefined, { style: "unit", unit: "kilobyte", maximumFractionDigits: 0 });
  const sizeText = (size) => (size >= 1048576 ? megabytes.format(size / 1048576) : kilobytes.format(Math.max(1, Math.round(size / 1024))));

  function renderFiles(q) {
    const list = $(".hf-files", q.el);
    list.textContent = "";
    for (const file of q.files) {
      const item = document.createElement("li");
      const label = document.createElement("span");
      label.textContent = text("fileUploaded", { name: file.name, size: sizeText(file.size || 0) });
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "hf-link";
      remove.textContent = text("removeFile");
      remove.setAttribute("aria-label", text("removeFileNamed", { name: file.name }));
      remove.addEventListener("click", () => {
        q.files = q.files.filter((f) => f !== file);
        renderFiles(q);
        remember();
        fieldOf(q).focus();
      });
      item.append(label, remove);
      list.append(item);
    }
    for (const name of q.pendingNames || []) {
      const item = document.createElement("li");
      item.textContent = text("uploading", { name });
      list.append(item);
    }
  }

  function setupFile(q) {
    const input = fieldOf(q);
    q.pendingNames = [];
    input.addEventListener("change", () => {
      clearError(q);
      for (const file of Array.from(input.files || [])) {
        q.pendingNames.push(file.name);
        const task = upload(file, file.name)
          .then((done) => {
            q.files.push({ uploadId: done.uploadId, name: done.name || file.name, size: done.size ?? file.size });
            remember();
          })
          .catch((err) => showError(q, err.message))
          .finally(() => {
            q.pending.delete(task);
            q.pendingNames.splice(q.pendingNames.indexOf(file.name), 1);
            renderFiles(q);
          });
        q.pending.add(task);
      }
      renderFiles(q);
      input.value = "";
    });
  }

  // ---- signature pad ----------------------------------------------------------------------------
  /** A multi-select: the search narrows the options shown (chosen ones stay), the summary counts the chosen. */
  function setupSearch(q, search) {
    const count = $(".hf-multi-count", q.el);
    const options = $$(".hf-option", q.el);
    search.hidden = false;
    search.addEventListener("input", () => {
      const words = search.value.trim().toLowerCase();
      for (const option of options) option.hidden = words !== "" && !$("input", option).checked && !option.textContent.toLowerCase().includes(words);
    });
    const recount = () => {
      const n = $$("input:checked", q.el).length;
      count.textContent = n ? text("optionsChosen", { count: n }) : "";
    };
    q.el.addEventListener("change", recount);
    recount();
  }

  function setupPad(q) {
    const canvas = $("canvas", q.el);
    const typed = $(".hf-pad-typed", q.el);
    const ctx = canvas.getContext("2d");
    const pad = { typed, hasInk: false, changed: 0, uploadedAt: 0, uploadId: "", image: "" };
    q.pad = pad;

    const blank = () => {
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
    };
    const touched = () => {
      pad.changed += 1;
      clearError(q);
    };
    const point = (event) => {
      const box = canvas.getBoundingClientRect();
      return { x: ((event.clientX - box.left) / box.width) * canvas.width, y: ((event.clientY - box.top) / box.height) * canvas.height };
    };
    blank();
    ctx.lineCap = "round";
    ctx.lineJoin = "round";

    let drawing = false;
    canvas.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      event.preventDefault();
      canvas.setPointerCapture(event.pointerId);
      drawing = true;
      if (typed.value) {
        typed.value = ""; // drawing replaces a typed signature
        blank();
      }
      const p = point(event);
      ctx.strokeStyle = "#111";
      ctx.lineWidth = (3 * canvas.width) / canvas.getBoundingClientRect().width;
      ctx.beginPath();
      ctx.moveTo(p.x, p.y);
      ctx.lineTo(p.x + 0.1, p.y + 0.1);
      ctx.stroke();
      pad.hasInk = true;
      touched();
    });
    canvas.addEventListener("pointermove", (event) => {
      if (!drawing) return;
      for (const e of event.getCoalescedEvents ? event.getCoalescedEvents() : [event]) {
        const p = point(e);
        ctx.lineTo(p.x, p.y);
      }
      ctx.stroke();
      touched();
    });
    const stop = () => {
      if (!drawing) return;
      drawing = false;
    };
    canvas.addEventListener("pointerup", stop);
    canvas.addEventListener("pointercancel", stop);

    $(".hf-pad-clear", q.el).addEventListener("click", () => {
      blank();
      typed.value = "";
      pad.hasInk = false;
      pad.uploadId = "";
      pad.image = "";
      touched();
      remember();
    });

    // The keyboard alternative: the typed name, written on the pad.
    typed.addEventListener("input", () => {
      blank();
      const name = typed.value.trim();
      if (name) {
        let size = canvas.height * 0.4;
        ctx.fillStyle = "#111";
        ctx.textBaseline = "middle";
        do {
          ctx.font = `italic ${size}px "Segoe Script", "Brush Script MT", "URW Chancery L", cursive`;
          size *= 0.9;
        } while (ctx.measureText(name).width > canvas.width * 0.9 && size > 10);
        ctx.fillText(name, canvas.width * 0.05, canvas.height / 2);
      }
      pad.hasInk = name !== "";
      touched();
    });

    pad.restore = (saved) => {
      pad.uploadId = saved.uploadId || "";
      pad.image = saved.image || "";
      pad.hasInk = Boolean(pad.uploadId);
      typed.value = saved.typed || "";
      if (pad.image) {
        const img = new Image();
        img.onload = () => ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
        img.src = pad.image;
      }
    };

    /** Uploads the drawing when it changed since the last upload (PNG). */
    pad.flush = async () => {
      if (pad.changed === pad.uploadedAt) return;
      const revision = pad.changed;
      if (!pad.hasInk) {
        pad.uploadId = "";
        pad.image = "";
      } else {
        const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
        if (!blob) throw new Error(text("signatureNotSaved"));
        const done = await upload(blob, "signature.png");
        pad.uploadId = done.uploadId;
        pad.image = canvas.toDataURL("image/png");
      }
      pad.uploadedAt = revision;
    };
  }

  // ---- saving -----------------------------------------------------------------------------------
  // One Idempotency-Key per save: sending the same answers again (after a network failure, a time-out
  // or a server restart) reuses it, so the server stores them once whatever became of the first try.
  let lastSave = { json: "", key: "" };
  function newIdempotencyKey() {
    if (crypto.randomUUID) return crypto.randomUUID();
    return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  async function postResponse(body) {
    const json = JSON.stringify(body);
    if (lastSave.json !== json) lastSave = { json, key: newIdempotencyKey() };
    const res = await fetch(config.responsesUrl, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": lastSave.key },
      body: json,
    });
    const data = await res.json().catch(() => ({}));
    return { status: res.status, ok: res.ok, data };
  }

  /** Saves everything answered so far; true when the server took it. */
  async function save(completed) {
    for (const q of questions) {
      if (q.pending.size) await Promise.allSettled(Array.from(q.pending));
    }
    for (const q of questions) {
      if (q.type !== "SIGNATURE") continue;
      try {
        await q.pad.flush();
      } catch (err) {
        showPage(q.page, false);
        showError(q, err.message);
        focusQuestion(q);
        return false;
      }
    }
    const body = { version: config.version, answers: answers(), hidden: hiddenValues(), completed, language: config.language };
    if (responseId) body.responseId = responseId;
    const trap = config.honeypotField && form.elements.namedItem(config.honeypotField);
    if (trap && trap.value) body.honeypot = trap.value;
    // A third party's widget (captcha-providers.ts) leaves its token in a field of its own.
    const captchaField = form.querySelector("[data-hf-captcha-field]")?.dataset.hfCaptchaField;
    const captcha = captchaPayload || (captchaField && form.elements.namedItem(captchaField)?.value);
    if (completed && captcha) body.captcha = captcha;
    let result;
    try {
      result = await postResponse(body);
      // A remembered response that is gone (deleted, or already completed): start a new one.
      if ((result.status === 404 || result.status === 409) && body.responseId) {
        delete body.responseId;
        result = await postResponse(body);
      }
    } catch {
      showSummary(text("sendFailed"));
      return false;
    }
    if (result.ok) {
      responseId = result.data.responseId || responseId;
      showSummary("");
      if (completed) {
        calculated = result.data.calculated || {};
        finished = true;
        forget();
        globalThis.formsvcInsights?.completed();
      }
      else remember();
      return true;
    }
    if (result.status === 400 && showFieldProblems(result.data.fields)) return false;
    // A 409 that a fresh response did not get past: the form closed meanwhile (FailedPrecondition).
    // A response rule's refusal (a single-use link, the password, a confirmed address, the captcha) says why by its code.
    const code = result.data?.code;
    const refused = result.status === 403 && typeof code === "string" && Object.hasOwn(config.messages, code) ? text(code) : undefined;
    showSummary(refused ?? (result.status === 429 ? text("tooManyAttempts") : result.status === 409 ? text("closed") : text("saveFailed", { status: result.status })));
    return false;
  }

  async function next() {
    if (busy || !validate([current])) return;
    setBusy(true);
    try {
      // What cannot be saved now would fail on submit too: stay, with the reason shown.
      if (config.saveProgress && !(await save(false))) return;
      showPage(nextIndex());
    } finally {
      setBusy(false);
    }
  }

  // Going on to another address after submitting: in an embed's frame the page around the form goes
  // there (embed.js does, on this message), as an owner's redirect means; a frame without embed.js
  // around it goes there itself.
  function leaveTo(url) {
    if (window.parent !== window) window.parent.postMessage({ type: "formsvc:redirect", url }, "*");
    if (!embedding.parentTakesRedirects) window.location.assign(url);
  }

  async function submit() {
    if (busy || !validate(logic ? logic.state.path : pages.map((_, i) => i))) return;
    setBusy(true);
    try {
      if (!(await save(true))) return;
      if (config.redirectUrl) {
        leaveTo(config.redirectUrl);
        return;
      }
      applyRecall(calculated);
      $(".hf-card", document).hidden = true;
      if (progress) progress.hidden = true;
      const thanks = $("#hf-thanks");
      thanks.hidden = false;
      thanks.focus();
      // The thank-you screen's own redirect, after the delay its note announces.
      const onward = config.thanksRedirect;
      if (onward) setTimeout(() => leaveTo(onward.url), onward.seconds * 1000);
    } finally {
      setBusy(false);
    }
  }

  // ---- wiring -----------------------------------------------------------------------------------
  for (const q of questions) {
    if (q.type === "FILE") setupFile(q);
    if (q.type === "SIGNATURE") setupPad(q);
    const search = $(".hf-multi-search", q.el);
    if (search) setupSearch(q, search);
  }
  /** An answer moves what texts recall, and what the rules decide, with it the buttons and the progress. */
  function followAnswers() {
    applyRecall();
    if (!logic) return;
    applyLogic();
    updateButtons();
    showProgress();
  }
  form.addEventListener("input", (event) => {
    followAnswers();
    const q = questions.find((x) => x.el.contains(event.target));
    if (q && q.error.textContent) clearError(q);
    clearTimeout(rememberTimer);
    rememberTimer = setTimeout(remember, 400);
  });
  form.addEventListener("change", () => {
    followAnswers();
    clearTimeout(rememberTimer);
    rememberTimer = setTimeout(remember, 100);
  });
  buttons.back.addEventListener("click", () => showPage(previousIndex()));
  buttons.next.addEventListener("click", () => void next());
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (nextIndex() !== undefined) void next();
    else void submit();
  });
  $("#hf-restart").addEventListener("click", () => {
    forget();
    window.location.reload();
  });

  const stored = config.saveProgress ? readStored() : null;
  if (stored) restore(stored);
  applyLogic();
  applyRecall();
  const first = logic ? logic.state.path.find((p) => logic.run.pageShows(logic.doc, logic.state, p)) : 0;
  showPage(first ?? 0, false);
})();
