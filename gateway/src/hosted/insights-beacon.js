// Insights of the hosted form page (issue 36), run before the page's own script: tells the gateway, by
// beacons to /f/:formId/insights, that a respondent started (their first answer), and at the end which
// questions they were shown and answered: on completion (form-page.js calls `completed()`) with the time
// since the page loaded, or when they leave the page without completing. Nothing identifies them: no
// cookie, no storage, no id; the questions shown are those the page showed (the rules' branches included).
globalThis.formsvcInsights = (() => {
  "use strict";
  const configElement = document.getElementById("hf-config");
  const form = document.getElementById("hf-form");
  if (!configElement || !form || typeof navigator.sendBeacon !== "function") return { completed() {} };
  // Without the responses URL's query (a single-use link's token, which insights need not see).
  const url = JSON.parse(configElement.textContent).responsesUrl.replace(/\/responses(\?.*)?$/, "/insights");
  const loadedAt = performance.now();
  const shown = []; // keys in the order the page first showed them
  const answered = new Set();
  let started = false;
  let done = false;

  const send = (body) => navigator.sendBeacon(url, JSON.stringify(body));
  const questionOf = (el) => el && el.closest && el.closest(".hf-q[data-key]");
  const isShown = (el) => el.getClientRects().length > 0;
  const hasAnswer = (el) =>
    Array.from(el.querySelectorAll("input, textarea, select")).some((input) =>
      input.type === "checkbox" || input.type === "radio" ? input.checked : input.type !== "hidden" && input.type !== "file" && input.value.trim() !== "",
    ) || answered.has(el.dataset.key);
  const look = () => {
    for (const el of form.querySelectorAll(".hf-q[data-key]")) {
      if (isShown(el) && !shown.includes(el.dataset.key)) shown.push(el.dataset.key);
    }
  };
  const visit = () => {
    look();
    const keys = shown.filter((key) => {
      const el = form.querySelector(`.hf-q[data-key="${CSS.escape(key)}"]`);
      return el && hasAnswer(el);
    });
    return { shown, answered: keys };
  };

  // The page shows other questions after a click or an answer (a page turn, a rule): looked at then.
  const lookSoon = () => requestAnimationFrame(look);
  addEventListener("load", lookSoon);
  lookSoon();
  document.addEventListener("click", lookSoon, true);
  const onAnswer = (event) => {
    const question = questionOf(event.target);
    // An upload or a signature has no value of its own on the page: its question counts once touched.
    if (question && (event.target.type === "file" || event.target.tagName === "CANVAS")) answered.add(question.dataset.key);
    lookSoon();
    if (started || done) return;
    started = true;
    send({ event: "start" });
  };
  form.addEventListener("input", onAnswer);
  form.addEventListener("change", onAnswer);
  form.addEventListener("pointerup", (event) => event.target.tagName === "CANVAS" && onAnswer(event));
  addEventListener("pagehide", () => {
    if (!started || done) return;
    done = true;
    send({ event: "leave", ...visit() });
  });

  return {
    /** The response was completed: what was shown and answered, and the time it took. */
    completed() {
      if (done) return;
      done = true;
      send({ event: "complete", ...visit(), seconds: Math.round((performance.now() - loadedAt) / 1000) });
    },
  };
})();
