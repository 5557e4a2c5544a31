import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { describeZodError, fieldViolationsOf } from "./errors.ts";
import {
  applySettingsPatch,
  defaultSettings,
  formSettingsPatchSchema,
  formSettingsSchema,
  isPastClosingDate,
  receiptQuestionOf,
  resolveSettings,
  sendsNotifications,
} from "./settings.ts";

test("full settings take their defaults", () => {
  assert.deepEqual(formSettingsSchema.parse({}), {
    language: "en",
    languages: [],
    branding: true,
    closedMessage: "This form is closed.",
    redirectUrl: null,
    submitLabel: "Submit",
    showProgressBar: true,
    saveProgress: true,
    oneQuestionAtATime: false,
    closesAt: null,
    responseLimit: null,
    deleteResponsesAfterDays: null,
    honeypot: true,
    submissionsPerMinute: null,
    embedOrigins: null,
    requireSingleUseLink: false,
    proofOfWork: null,
    password: false,
    requireEmailVerification: false,
    captcha: null,
    notifications: { owner: false, members: [], receiptQuestionId: null },
    theme: { accentColor: "#0969da", backgroundColor: "#f6f7f9", font: "system", buttonStyle: "rounded", logo: null, colorScheme: "light" },
    thankYou: { title: "Thank you!", text: "Your response has been recorded.", buttonLabel: null, buttonUrl: null, redirectSeconds: null },
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
  assert.equal(patchError({ colours: "dark" }), "settings.colours: unknown property");
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
    "captcha",
    "closedMessage",
    "closesAt",
    "deleteResponsesAfterDays",
    "embedOrigins",
    "honeypot",
    "language",
    "languages",
    "notifications",
    "oneQuestionAtATime",
    "password",
    "proofOfWork",
    "redirectUrl",
    "requireEmailVerification",
    "requireSingleUseLink",
    "responseLimit",
    "saveProgress",
    "showProgressBar",
    "submissionsPerMinute",
    "submitLabel",
    "thankYou",
    "theme",
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

test("a theme is given whole, its absent properties take their defaults, and its contrast is checked", () => {
  const patch = formSettingsPatchSchema.parse({ theme: { accentColor: "#1a7f37", font: "serif", buttonStyle: "pill" } });
  assert.deepEqual(patch.theme, { accentColor: "#1a7f37", backgroundColor: "#f6f7f9", font: "serif", buttonStyle: "pill", logo: null, colorScheme: "light" });
  const low = formSettingsPatchSchema.safeParse({ theme: { accentColor: "#ffd33d", backgroundColor: "#444c56" } });
  assert.equal(low.success, false);
  assert.match(describeZodError(low.error!, "settings"), /settings\.theme\.accentColor: white text on the accent colour has a contrast of 1\.\d\d:1; at least 4\.5:1 is needed/);
  assert.match(describeZodError(low.error!, "settings"), /settings\.theme\.backgroundColor: the text on the background colour has a contrast of/);
  assert.deepEqual(
    fieldViolationsOf(low.error!, "settings").map((v) => v.path),
    ["settings.theme.accentColor", "settings.theme.backgroundColor"],
    "both colours are field violations, by their paths",
  );
  const badColour = formSettingsPatchSchema.safeParse({ theme: { accentColor: "red" } });
  assert.deepEqual(fieldViolationsOf(badColour.error!), [], "a value of the wrong shape is no field violation: its message says it");
  for (const [theme, problem] of [
    [{ accentColor: "red" }, /accentColor: must be a colour as #rrggbb/],
    [{ font: "Comic Sans" }, /font: Invalid option/],
    [{ buttonStyle: "round" }, /buttonStyle: Invalid option/],
    [{ logo: "https://example.com/logo.png" }, /logo: must be a data: URL of a PNG, JPEG, GIF or WebP image/],
    [{ logo: "data:image/svg+xml;base64,PHN2Zz4=" }, /logo: must be a data: URL/],
    [{ logo: `data:image/png;base64,${"A".repeat(70_000)}` }, /logo: must be at most 70000 characters/],
    [{ colour: "#000000" }, /theme\.colour: unknown property/],
  ] as const) {
    const result = formSettingsPatchSchema.safeParse({ theme });
    assert.equal(result.success, false, JSON.stringify(theme));
    assert.match(describeZodError(result.error!, "settings"), problem);
  }
  assert.equal(formSettingsPatchSchema.safeParse({ theme: { logo: "data:image/png;base64,iVBORw0KGgo=" } }).success, true);
  assert.deepEqual(resolveSettings({ theme: { accentColor: "#ffffff" } }).theme, defaultSettings.theme, "a stored theme no longer valid takes the default");
});

test("a thank-you screen: a button needs its URL (http or https), a redirect needs where to go", () => {
  const screen = { title: "Thanks, see you there", text: "Doors open at 9.", buttonLabel: "Back to the site", buttonUrl: "https://example.com/", redirectSeconds: 5 };
  assert.deepEqual(formSettingsPatchSchema.parse({ thankYou: screen }).thankYou, screen);
  assert.deepEqual(formSettingsPatchSchema.parse({ thankYou: { title: "Merci" } }).thankYou, { ...defaultSettings.thankYou, title: "Merci" });
  for (const [thankYou, problem] of [
    [{ buttonLabel: "Go" }, /thankYou\.buttonUrl: is required with a buttonLabel/],
    [{ redirectSeconds: 3 }, /thankYou\.buttonUrl: is required with redirectSeconds/],
    [{ buttonUrl: "https://example.com/" }, /thankYou\.buttonUrl: needs a buttonLabel or redirectSeconds/],
    [{ buttonLabel: "Go", buttonUrl: "javascript:alert(1)" }, /thankYou\.buttonUrl: must be an http or https URL/],
    [{ title: " " }, /thankYou\.title: must not be blank/],
    [{ buttonUrl: "https://example.com/", redirectSeconds: 601 }, /thankYou\.redirectSeconds: Too big/],
  ] as const) {
    const result = formSettingsPatchSchema.safeParse({ thankYou });
    assert.equal(result.success, false, JSON.stringify(thankYou));
    assert.match(describeZodError(result.error!, "settings"), problem);
  }
});

test("embedOrigins: any site by default; origins only, so nothing else reaches the frame-ancestors header", () => {
  assert.equal(resolveSettings({}).embedOrigins, null);
  const allowed = ["https://example.com", "https://*.example.org", "http://localhost:3000", "http://127.0.0.1:8080"];
  assert.deepEqual(formSettingsPatchSchema.parse({ embedOrigins: allowed }).embedOrigins, allowed);
  assert.deepEqual(formSettingsPatchSchema.parse({ embedOrigins: [] }).embedOrigins, []);
  for (const bad of ["https://example.com/", "https://example.com/page", "example.com", "ftp://example.com", "https://exa mple.com", "https://a.com; script-src *", "*", "'self'", "HTTPS://Example.com"]) {
    assert.match(patchError({ embedOrigins: [bad] }), /^settings\.embedOrigins\[0\]: must be an origin/, bad);
  }
  assert.equal(resolveSettings({ embedOrigins: ["not an origin"] }).embedOrigins, null, "a stored value no longer valid takes the default");
});

test("deleteResponsesAfterDays: kept forever by default; a whole number of days from 1 to 3650, or null", () => {
  assert.equal(resolveSettings({}).deleteResponsesAfterDays, null);
  assert.equal(formSettingsPatchSchema.parse({ deleteResponsesAfterDays: 30 }).deleteResponsesAfterDays, 30);
  assert.equal(formSettingsPatchSchema.parse({ deleteResponsesAfterDays: 1 }).deleteResponsesAfterDays, 1);
  assert.equal(formSettingsPatchSchema.parse({ deleteResponsesAfterDays: 3650 }).deleteResponsesAfterDays, 3650);
  assert.equal(formSettingsPatchSchema.parse({ deleteResponsesAfterDays: null }).deleteResponsesAfterDays, null);
  for (const bad of [0, -1, 1.5, 3651, "30", true]) {
    assert.match(patchError({ deleteResponsesAfterDays: bad }), /^settings\.deleteResponsesAfterDays: /, JSON.stringify(bad));
  }
  assert.equal(resolveSettings({ deleteResponsesAfterDays: 0 }).deleteResponsesAfterDays, null, "a stored value no longer valid keeps responses");
  assert.equal(resolveSettings({ deleteResponsesAfterDays: 90 }).deleteResponsesAfterDays, 90);
});

test("the README's first paragraph says what the defaults are: notifications off until an owner turns them on", () => {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
  const first = readme.split(/\n\n/)[1].replace(/\s+/g, " ");
  assert.equal(sendsNotifications(defaultSettings), false);
  assert.match(first, /owners may turn on an email per response .* off by default\./);
  assert.doesNotMatch(first, /owners get an email per response/);
});

test("the receipt question: an EMAIL question by block id or key, stored as its block id", () => {
  const document = {
    blocks: [
      { id: "b1", key: "q_name", type: "SHORT_TEXT", question: "Name" },
      { id: "b2", key: "q_email", type: "EMAIL", question: "Email" },
      { id: "b3", type: "PAGE_BREAK" },
    ],
  } as Parameters<typeof receiptQuestionOf>[0];
  assert.deepEqual(receiptQuestionOf(document, "b2"), { id: "b2" });
  assert.deepEqual(receiptQuestionOf(document, "q_email"), { id: "b2" });
  assert.deepEqual(receiptQuestionOf(document, "no_such_question"), { problem: 'no question of the form has the id or key "no_such_question"' });
  assert.deepEqual(receiptQuestionOf(document, "q_name"), { problem: '"q_name" is a SHORT_TEXT question; a receipt needs an EMAIL question' });
  assert.deepEqual(receiptQuestionOf(document, "b3"), { problem: '"b3" is a PAGE_BREAK question; a receipt needs an EMAIL question' });
});
