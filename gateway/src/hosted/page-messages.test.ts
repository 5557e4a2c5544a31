import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultSettings, normalizeDocument } from "@formsvc/form-document";
import { answersFromFields } from "./form-fields.ts";
import { catalogueLanguageOf, directionOf, negotiateLanguage, pageLanguages, pageTexts } from "./page-messages.ts";
import { renderClosedPage, renderFormPage, renderThankYouPage } from "./render-form.ts";
import { englishTextsIn } from "./testing/english-texts.ts";

const doc = normalizeDocument({
  title: "Vereinsfest",
  blocks: [
    { type: "SHORT_TEXT", key: "name", question: "Name", required: true },
    { type: "DROPDOWN", key: "size", question: "Größe", options: [{ id: "s", text: "S" }] },
    { type: "RATING", key: "rating", question: "Bewertung" },
    { type: "PAGE_BREAK" },
    { type: "FILE", key: "cv", question: "Lebenslauf" },
    { type: "SIGNATURE", key: "sig", question: "Unterschrift" },
  ],
}).document;

describe("page languages", () => {
  it("ships the 13 languages of the issue", () => {
    assert.deepEqual([...pageLanguages].sort(), ["ar", "de", "en", "es", "fr", "he", "it", "ja", "nl", "pl", "pt-BR", "sv", "zh-CN"]);
  });

  it("reads a tag in its own catalogue, one of its language, else English", () => {
    assert.equal(catalogueLanguageOf("de"), "de");
    assert.equal(catalogueLanguageOf("de-AT"), "de");
    assert.equal(catalogueLanguageOf("PT"), "pt-BR");
    assert.equal(catalogueLanguageOf("zh-cn"), "zh-CN");
    assert.equal(catalogueLanguageOf("fi"), "en");
  });

  it("negotiates Accept-Language by its weights, a language matching its regional tags", () => {
    const offered = ["en", "de", "pt-BR"];
    assert.equal(negotiateLanguage("fr-CH, de;q=0.8, en;q=0.5", offered), "de");
    assert.equal(negotiateLanguage("en;q=0.2, de-AT;q=0.9", offered), "de");
    assert.equal(negotiateLanguage("pt-PT", offered), "pt-BR");
    assert.equal(negotiateLanguage("fr, *;q=0.1", offered), undefined);
    assert.equal(negotiateLanguage("de;q=0", offered), undefined);
    assert.equal(negotiateLanguage(undefined, offered), undefined);
  });

  it("knows ar and he run right to left", () => {
    assert.deepEqual(pageLanguages.filter((language) => directionOf(language) === "rtl").sort(), ["ar", "he"]);
  });

  it("formats plurals and numbers through CLDR", () => {
    assert.equal(pageTexts("pl").text("redirectNote", { site: "x.pl", seconds: 3 }), "Za 3 sekundy nastąpi przejście do x.pl.");
    assert.equal(pageTexts("pl").text("redirectNote", { site: "x.pl", seconds: 5 }), "Za 5 sekund nastąpi przejście do x.pl.");
    assert.equal(pageTexts("de").text("redirectNote", { site: "x.de", seconds: 1 }), "Sie werden in 1 Sekunde zu x.de weitergeleitet.");
  });

  it("gives the page's script templates to fill in", () => {
    const templates = pageTexts("fr").scriptTemplates();
    assert.equal(templates.pageOf, "Page \u0000page\u0000 sur \u0000pages\u0000");
    assert.equal(templates.questionRequired, "Cette question est obligatoire.");
  });
});

describe("a page in German", () => {
  const settings = { ...defaultSettings, language: "de", thankYou: { ...defaultSettings.thankYou, buttonUrl: "https://example.de/", redirectSeconds: 5 } };
  const input = {
    formId: "f1",
    name: "Fest",
    version: 1,
    document: doc,
    settings,
    showBranding: true,
    hidden: {},
    urls: { base: "/f", script: "/f/assets/form-page.js", branding: "/" },
    texts: pageTexts("de"),
    errors: answersFromFields(doc, {}, pageTexts("de")).errors,
  };
  const html = renderFormPage(input);

  it("says it is German and shows no English system text, its defaults included", () => {
    assert.ok(englishTextsIn(renderFormPage({ ...input, texts: undefined })).includes("(required)"), "the check finds English");
    assert.match(html, /<html lang="de" dir="ltr">/);
    assert.deepEqual(englishTextsIn(html), []);
    assert.match(html, /<button type="submit" class="hf-submit" id="hf-submit">Absenden<\/button>/);
    assert.match(html, /Diese Frage muss beantwortet werden\./);
    assert.match(html, /<h2 id="hf-thanks-title">Vielen Dank!<\/h2>/);
    assert.match(html, /Sie werden in 5 Sekunden zu <a href="https:\/\/example\.de\/">example\.de<\/a> weitergeleitet\./);
  });

  it("keeps what the owner wrote", () => {
    const texts = pageTexts("de");
    const info = { name: "Fest", document: doc, showBranding: false, brandingUrl: "/", texts };
    assert.match(renderClosedPage({ ...info, closedMessage: defaultSettings.closedMessage }), /Dieses Formular ist geschlossen\./);
    assert.match(renderClosedPage({ ...info, closedMessage: "Leider voll." }), /Leider voll\./);
    assert.match(renderThankYouPage({ ...info, thankYou: { ...defaultSettings.thankYou, title: "Bis bald!" } }), /Bis bald![\s\S]*Ihre Antwort wurde gespeichert\./);
  });
});
