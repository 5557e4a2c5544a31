import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { describeZodError } from "./errors.ts";
import {
  applySettingsPatch,
  defaultSettings,
  formSettingsPatchSchema,
  formSettingsSchema,
  resolveSettings,
} from "./settings.ts";

test("full settings take their defaults", () => {
  assert.deepEqual(formSettingsSchema.parse({}), {
    branding: true,
    closedMessage: "This form is closed.",
    redirectUrl: null,
    submitLabel: "Submit",
    showProgressBar: true,
    saveProgress: true,
  });
  assert.deepEqual(formSettingsSchema.parse({}), { ...defaultSettings });
  assert.equal(formSettingsSchema.parse({ branding: false }).branding, false);
});

test("a patch changes only what it names", () => {
  const patch = formSettingsPatchSchema.parse({ submitLabel: "Send", redirectUrl: "https://example.com/thanks" });
  assert.deepEqual(patch, { submitLabel: "Send", redirectUrl: "https://example.com/thanks" });
  const next = applySettingsPatch({ ...defaultSettings }, patch);
  assert.deepEqual(next, { ...defaultSettings, submitLabel: "Send", redirectUrl: "https://example.com/thanks" });
  const cleared = applySettingsPatch(next, formSettingsPatchSchema.parse({ redirectUrl: null }));
  assert.equal(cleared.redirectUrl, null);
  assert.deepEqual(formSettingsPatchSchema.parse({}), {}, "an empty patch adds no defaults");
});

function patchError(patch: unknown): string {
  const result = formSettingsPatchSchema.safeParse(patch);
  assert.equal(result.success, false);
  return describeZodError(result.error!, "settings");
}

test("a patch is validated and names the property", () => {
  assert.equal(patchError({ theme: "dark" }), "settings.theme: unknown property");
  assert.match(patchError({ branding: "no" }), /^settings\.branding: /);
  assert.match(patchError({ redirectUrl: "ftp://example.com" }), /^settings\.redirectUrl: must be an http or https URL/);
  assert.match(patchError({ redirectUrl: "not a url" }), /^settings\.redirectUrl: /);
  assert.match(patchError({ submitLabel: "" }), /^settings\.submitLabel: /);
  assert.match(patchError({ submitLabel: "x".repeat(61) }), /^settings\.submitLabel: /);
  assert.match(patchError({ closedMessage: "x".repeat(1001) }), /^settings\.closedMessage: /);
  assert.match(patchError({ saveProgress: null }), /^settings\.saveProgress: /);
  assert.equal(formSettingsPatchSchema.safeParse({ closedMessage: "" }).success, true);
  assert.equal(formSettingsPatchSchema.safeParse({ redirectUrl: "http://localhost:3000/done" }).success, true);
});

test("stored settings resolve with defaults, ignoring what is no longer valid", () => {
  assert.deepEqual(resolveSettings(undefined), { ...defaultSettings });
  assert.deepEqual(resolveSettings({ branding: false, submitLabel: "", old: 1 }), { ...defaultSettings, branding: false });
});

test("the patch schema converts to JSON Schema", () => {
  const json = z.toJSONSchema(formSettingsPatchSchema) as Record<string, any>;
  assert.equal(json.additionalProperties, false);
  assert.equal(json.required, undefined);
  assert.deepEqual(Object.keys(json.properties).sort(), [
    "branding",
    "closedMessage",
    "redirectUrl",
    "saveProgress",
    "showProgressBar",
    "submitLabel",
  ]);
});
