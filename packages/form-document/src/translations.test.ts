import assert from "node:assert/strict";
import { test } from "node:test";
import { normalizeDocument } from "./normalize.ts";
import { defaultSettings, formSettingsPatchSchema, type FormSettings } from "./settings.ts";
import { describeMissingTranslations, formLanguages, missingTranslations, ownerTexts, translateForm } from "./translations.ts";

const doc = normalizeDocument({
  title: "Club party",
  blocks: [
    { id: "h", type: "HEADING", text: "About you" },
    { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", placeholder: "First and last" },
    { id: "meal", key: "meal", type: "DROPDOWN", question: "Meal", description: "Pick one", options: [{ id: "veg", text: "Vegetarian" }, { id: "meat", text: "Meat" }] },
    { id: "pb", type: "PAGE_BREAK" },
  ],
}).document;

const settings = (languages: FormSettings["languages"], own: Partial<FormSettings> = {}): FormSettings => ({ ...defaultSettings, ...own, languages });

test("every owner text has a path by ids; settings left at their defaults need none", () => {
  assert.deepEqual(
    ownerTexts(doc, settings([], { closedMessage: "We are full." })).map((t) => t.path),
    ["title", "h.text", "name.question", "name.placeholder", "meal.question", "meal.description", "meal.options.veg", "meal.options.meat", "closedMessage"],
  );
});

test("a translation missing texts is named, each with its text", () => {
  const de = { language: "de", texts: { title: "Vereinsfest", "h.text": "Über Sie", "name.question": "Ihr Name", "name.placeholder": " ", "meal.question": "Essen", "meal.description": "Eines wählen", "meal.options.veg": "Vegetarisch" } };
  const missing = missingTranslations(doc, settings([de]));
  assert.deepEqual(missing.map((m) => [m.language, m.missing.map((t) => t.path)]), [["de", ["name.placeholder", "meal.options.meat"]]]);
  assert.equal(describeMissingTranslations(missing), 'the de translation misses 2 texts: name.placeholder ("First and last"), meal.options.meat ("Meat")');
  assert.deepEqual(missingTranslations(doc, settings([{ ...de, texts: { ...de.texts, "name.placeholder": "Vor- und Nachname", "meal.options.meat": "Fleisch" } }])), []);
});

test("the form in a language: its texts translated, ids, keys and the rest unchanged", () => {
  const s = settings([{ language: "de", texts: { title: "Vereinsfest", "name.question": "Ihr Name", "meal.options.veg": "Vegetarisch", submitLabel: "Los" } }], { submitLabel: "Go" });
  const { document, settings: translated } = translateForm(doc, s, "DE");
  assert.equal(document.title, "Vereinsfest");
  assert.deepEqual(document.blocks[1], { ...doc.blocks[1], question: "Ihr Name" });
  assert.deepEqual((document.blocks[2] as { options: unknown }).options, [{ id: "veg", text: "Vegetarisch" }, { id: "meat", text: "Meat" }]);
  assert.equal(translated.submitLabel, "Los");
  assert.equal(translateForm(doc, s, "en").document, doc, "the form's own language changes nothing");
  assert.deepEqual(formLanguages(s), ["en", "de"]);
});

test("settings.languages refuses a duplicate language and a tag that is none", () => {
  const problems = formSettingsPatchSchema.safeParse({ language: "english", languages: [{ language: "de", texts: {} }, { language: "DE", texts: {} }] });
  assert.equal(problems.success, false);
  const paths = problems.error!.issues.map((issue) => issue.path.join("."));
  assert.deepEqual(paths.sort(), ["language", "languages.1.language"]);
});
