import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { describeZodError } from "./errors.ts";
import {
  applySettingsPatch,
  defaultSettings,
  formSettingsPatchSchema,
  formSettingsSchema,
  isPastClosingDate,
  resolveSettings,
  sendsNotifications,
} from "./settings.ts";

test("full settings take their defaults", () => {
  assert.deepEqual(formSettingsSchema.parse({}), {
    branding: true,
    closedMessage: "This form is closed.",
    redirectUrl: null,
    submitLabel: "Submit",
    showProgressBar: true,
    saveProgress: true,
    closesAt: null,
    responseLimit: null,
    honeypot: true,
    submissionsPerMinute: null,
    notifications: { owner: false, members: [], receiptQuestionId: null },
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
    "closesAt",
    "honeypot",
    "notifications",
    "redirectUrl",
    "responseLimit",
    "saveProgress",
    "showProgressBar",
    "submissionsPerMinute",
    "submitLabel",
  ]);
});

test("notifications: off by default, given whole in a patch, validated", () => {
  assert.deepEqual(resolveSettings({}).notifications, { owner: false, members: [], receiptQuestionId: null });
  assert.equal(sendsNotifications(resolveSettings({})), false);
  const patch = formSettingsPatchSchema.parse({ notifications: { owner: true } });
  assert.deepEqual(patch.notifications, { owner: true, members: [], receiptQuestionId: null }, "absent properties take their defaults");
  assert.equal(sendsNotifications(applySettingsPatch({ ...defaultSettings }, patch)), true);
  const receipt = resolveSettings({ notifications: { owner: false, members: [], receiptQuestionId: "q1" } });
  assert.equal(sendsNotifications(receipt), true);
  assert.match(patchError({ notifications: { owner: "yes" } }), /^settings\.notifications\.owner: /);
  assert.match(patchError({ notifications: { members: ["not an address"] } }), /^settings\.notifications\.members\[0\]: /);
  assert.match(patchError({ notifications: { members: Array.from({ length: 21 }, (_, i) => `m${i}@example.com`) } }), /^settings\.notifications\.members: /);
  assert.equal(patchError({ notifications: { cc: "x@example.com" } }), "settings.notifications.cc: unknown property");
  assert.deepEqual(resolveSettings({ notifications: { owner: 1 } }).notifications, defaultSettings.notifications, "stored values no longer valid take the default");
});

test("form controls: a closing date, a response limit, the honeypot and a rate, validated", () => {
  const patch = formSettingsPatchSchema.parse({ closesAt: "2027-01-31T17:00:00+01:00", responseLimit: 5, honeypot: false, submissionsPerMinute: 30 });
  const next = applySettingsPatch({ ...defaultSettings }, patch);
  assert.deepEqual([next.closesAt, next.responseLimit, next.honeypot, next.submissionsPerMinute], ["2027-01-31T17:00:00+01:00", 5, false, 30]);
  assert.match(patchError({ closesAt: "next friday" }), /^settings\.closesAt: must be an ISO 8601 date-time/);
  assert.match(patchError({ responseLimit: 0 }), /^settings\.responseLimit: /);
  assert.match(patchError({ responseLimit: 2.5 }), /^settings\.responseLimit: /);
  assert.match(patchError({ submissionsPerMinute: 0 }), /^settings\.submissionsPerMinute: /);
  assert.equal(formSettingsPatchSchema.safeParse({ closesAt: null, responseLimit: null, submissionsPerMinute: null }).success, true);

  const closing = { closesAt: "2027-01-31T16:00:00Z" };
  assert.equal(isPastClosingDate(closing, new Date("2027-01-31T15:59:59Z")), false);
  assert.equal(isPastClosingDate(closing, new Date("2027-01-31T16:00:00Z")), true);
  assert.equal(isPastClosingDate({ closesAt: null }, new Date("2999-01-01T00:00:00Z")), false);
});
