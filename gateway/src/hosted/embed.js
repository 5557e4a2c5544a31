// The embed script, served at /embed.js (plain browser JavaScript, no build step). A site that puts it on
// a page next to either of these gets:
//   <iframe data-formsvc-embed src="https://forms.example.com/f/ID" title="..."></iframe>
//       the form inside the page, the frame's height following the form's as it changes (pages, errors,
//       the thank-you screen), so it never shows a scroll bar of its own;
//   <button type="button" data-formsvc-popup="https://forms.example.com/f/ID">Open the form</button>
//       the form over the page in a modal dialog (Escape, the close button or a click beside it closes it).
// Only this service's forms are handled: messages are taken from frames of the script's own origin, and a
// popup opens only a URL there. A form that sends people on after submitting (its redirect) takes the
// whole page there, not just its frame. Its texts (embedMessages, put before it by embed.ts) are in the
// language of the popup button's part of the page.
(() => {
  "use strict";
  if (window.formsvcEmbed) return; // the script is on the page twice
  const script = document.currentScript;
  const origin = new URL(script && script.src ? script.src : location.href).origin;
  window.formsvcEmbed = { origin };
  const maxHeight = 100_000;

  // ---- messages of the hosted page: {type: "formsvc:height", height} whenever its height changes, and
  // {type: "formsvc:redirect", url} when the form sends people on after submitting --------------------
  const ourFrames = () => document.querySelectorAll("iframe[data-formsvc-embed], dialog.formsvc-popup iframe");
  window.addEventListener("message", (event) => {
    if (event.origin !== origin || !event.data) return;
    const frame = Array.from(ourFrames()).find((f) => f.contentWindow === event.source);
    if (!frame) return;
    const data = event.data;
    if (data.type === "formsvc:height" && typeof data.height === "number" && Number.isFinite(data.height)) {
      // The frame learns that this page takes it to the form's redirect (form-page.js leaves it to us then).
      event.source.postMessage({ type: "formsvc:embedded" }, origin);
      // A popup's frame fills its dialog; only inline frames follow the form.
      if (!frame.hasAttribute("data-formsvc-embed")) return;
      frame.style.height = `${Math.min(Math.max(Math.ceil(data.height), 0), maxHeight)}px`;
      frame.dataset.formsvcHeight = String(Math.ceil(data.height));
    } else if (data.type === "formsvc:redirect" && typeof data.url === "string") {
      let url;
      try {
        url = new URL(data.url);
      } catch {
        return;
      }
      if (url.protocol === "https:" || url.protocol === "http:") window.location.assign(url.href);
    }
  });

  // ---- popup buttons ---------------------------------------------------------------------------------
  const style = (el, properties) => Object.assign(el.style, properties);

  /** A message in the language around `el` (its lang, the page's, the browser's): that tag's, its language's, else the source's. */
  function message(key, el) {
    const tag = ((el.closest("[lang]") && el.closest("[lang]").lang) || navigator.language || "").toLowerCase();
    const languages = Object.keys(embedMessages.catalogues);
    const language =
      languages.find((l) => l.toLowerCase() === tag) ||
      languages.find((l) => l.toLowerCase().split("-")[0] === tag.split("-")[0]) ||
      embedMessages.sourceLanguage;
    return embedMessages.catalogues[language][key];
  }

  function openPopup(button) {
    let url;
    try {
      url = new URL(button.getAttribute("data-formsvc-popup") || "", location.href);
    } catch {
      return;
    }
    if (url.origin !== origin) return;
    const label = button.getAttribute("data-formsvc-title") || button.textContent.trim() || message("untitledForm", button);
    // Styled through the CSSOM (not a <style> element), so a host page's CSP without 'unsafe-inline' allows it.
    const dialog = document.createElement("dialog");
    dialog.className = "formsvc-popup";
    dialog.setAttribute("aria-label", label);
    style(dialog, {
      width: "100vw",
      height: "100vh",
      maxWidth: "100vw",
      maxHeight: "100vh",
      margin: "0",
      padding: "0",
      border: "0",
      background: "rgba(15, 23, 42, 0.6)",
      boxSizing: "border-box",
    });
    const box = document.createElement("div");
    style(box, {
      position: "relative",
      width: "min(42rem, calc(100vw - 2rem))",
      height: "min(48rem, calc(100vh - 2rem))",
      margin: "1rem auto",
      background: "#fff",
      borderRadius: "12px",
      overflow: "hidden",
      boxShadow: "0 10px 40px rgba(0, 0, 0, 0.35)",
    });
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "×";
    close.setAttribute("aria-label", message("closeForm", button));
    style(close, {
      position: "absolute",
      top: "0.5rem",
      insetInlineEnd: "0.5rem",
      width: "2.5rem",
      height: "2.5rem",
      border: "0",
      borderRadius: "999px",
      background: "rgba(255, 255, 255, 0.9)",
      font: "1.75rem/1 system-ui, sans-serif",
      cursor: "pointer",
      color: "#1f2328",
    });
    const frame = document.createElement("iframe");
    frame.src = url.href;
    frame.title = label;
    style(frame, { width: "100%", height: "100%", border: "0", display: "block" });
    box.append(frame, close);
    dialog.append(box);
    document.body.append(dialog);
    close.addEventListener("click", () => dialog.close());
    // A click on the dimmed area beside the form closes it.
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) dialog.close();
    });
    dialog.addEventListener("close", () => {
      dialog.remove();
      button.focus();
    });
    dialog.showModal();
    close.focus();
  }

  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("[data-formsvc-popup]") : null;
    if (!button) return;
    event.preventDefault();
    openPopup(button);
  });
})();
