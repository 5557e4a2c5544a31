// One question at a time (settings.oneQuestionAtATime) in the browser. The server makes every question a
// screen of its own (one-question.ts) and form-page.js goes screen by screen as it goes page by page
// (checks, rules, recall, partial saves); this adds the keys, the focus and the direction of the
// transition (the CSS runs it, or not, as prefers-reduced-motion says). It works through the page:
// the keys press the page's own buttons, and form-page.js's "formsvc:page" event says a screen came.
//   Enter            on: Next, or Submit on the last question (a required answer missing stops it, said)
//   Shift+Enter      back
//   Ctrl/Cmd+Enter   on from a long text, where Enter (and Shift+Enter) start a new line
// A choice picked with a mouse, pen or finger moves on by itself, except on the last question (submitting
// stays the respondent's decision); arrow keys going through the choices do not.
(() => {
  "use strict";

  const form = document.getElementById("hf-form");
  if (!form || !form.classList.contains("hf-one")) return;
  const button = (id) => document.getElementById(id);
  const usable = (element) => element && !element.hidden && !element.disabled;
  const shownQuestions = (screen) => Array.from(screen.querySelectorAll(".hf-q")).filter((q) => !q.hidden);

  function onward() {
    const next = button("hf-next");
    const target = usable(next) ? next : button("hf-submit");
    if (usable(target)) target.click();
  }

  function back() {
    const previous = button("hf-back");
    if (usable(previous)) previous.click();
  }

  // The direction the next screen comes from (the CSS's animation), set before form-page.js moves.
  form.addEventListener(
    "click",
    (event) => {
      const pressed = event.target.closest("#hf-back, #hf-next, #hf-submit");
      if (pressed) form.dataset.direction = pressed.id === "hf-back" ? "back" : "next";
    },
    true,
  );

  form.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing || event.altKey) return;
    const target = event.target;
    if (target.closest("altcha-widget")) return;
    const multiline = target.tagName === "TEXTAREA";
    const command = event.ctrlKey || event.metaKey;
    if (event.shiftKey && !command) {
      if (multiline) return;
      event.preventDefault();
      back();
      return;
    }
    // What Enter works itself: a button, a link, a disclosure, a file chooser.
    if (target.closest("button, a, summary") || target.type === "file") return;
    if (multiline && !command) return;
    event.preventDefault();
    onward();
  });

  // A new screen: the focus goes to its question's answer (its label is read with it), or to the screen.
  form.addEventListener("formsvc:page", (event) => {
    const question = shownQuestions(event.detail.page)[0];
    if (!question) return;
    const field =
      question.querySelector("input[type=radio]:checked") ||
      question.querySelector("summary, input:not([type=hidden]):not([hidden]), select, textarea");
    if (!field) return;
    event.preventDefault();
    field.focus({ preventScroll: true });
  });

  let pointer = false;
  let moving = 0;
  form.addEventListener("pointerdown", () => (pointer = true), true);
  form.addEventListener("keydown", () => (pointer = false), true);
  form.addEventListener("change", (event) => {
    const input = event.target;
    const question = input.closest(".hf-q");
    const screen = input.closest(".hf-page");
    if (!pointer || input.type !== "radio" || !question || !["option", "steps"].includes(question.dataset.answer)) return;
    if (shownQuestions(screen).length !== 1) return;
    clearTimeout(moving);
    // A moment to see the pick before the screen goes.
    moving = setTimeout(() => {
      if (screen.classList.contains("hf-current") && usable(button("hf-next"))) onward();
    }, 300);
  });

  button("hf-keys").hidden = false;
})();
