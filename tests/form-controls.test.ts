import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// The form controls against the whole running system: an owner sets them over /api/v1, a respondent
// meets them on the hosted form (its page and its posts), and the owner reads back what was stored.

let sys: TestSystem;
let ada: Awaited<ReturnType<typeof createUserWithKey>>;
before(async () => {
  sys = await startTestSystem("form_controls");
  ada = await createUserWithKey(sys, "ada@example.com");
});
after(() => sys?.stop());

const document = { title: "Workshop", blocks: [{ id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true }] };

async function publishedForm(settings: object) {
  const created = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Workshop", document });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const patched = await ada.api("PATCH", `/forms/${created.body.id}`, { settings });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  await sys.cli("form:publish", "--id", created.body.id);
  return created.body.id as string;
}

const respond = (formId: string, body: object) =>
  fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const postPlain = (formId: string, fields: [string, string][]) =>
  fetch(`${sys.url}/f/${formId}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
const completedCount = async (formId: string) => (await ada.api("GET", `/forms/${formId}/submissions?filter=completed&limit=100`)).body.items.length;

describe("form controls, end to end", () => {
  it("a response limit of 5 takes exactly 5 of 10 concurrent submissions; then the page says closed", async () => {
    const formId = await publishedForm({ responseLimit: 5, closedMessage: "All places are taken." });
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => respond(formId, { answers: { name: `R${i}` }, completed: true }).then((r) => r.status)));
    assert.deepEqual(statuses.toSorted(), [200, 200, 200, 200, 200, 409, 409, 409, 409, 409]);
    assert.equal(await completedCount(formId), 5);
    const page = await (await fetch(`${sys.url}/f/${formId}`)).text();
    assert.match(page, /All places are taken\./);
    assert.equal((await postPlain(formId, [["name", "Late"]])).status, 409);
  });

  it("a closing date in the past closes the form", async () => {
    const formId = await publishedForm({});
    assert.equal((await respond(formId, { answers: { name: "Early" }, completed: true })).status, 200);
    assert.equal((await ada.api("PATCH", `/forms/${formId}`, { settings: { closesAt: new Date(Date.now() - 1000).toISOString() } })).status, 200);
    const late = await respond(formId, { answers: { name: "Late" }, completed: true });
    assert.equal(late.status, 409);
    assert.match((await late.json()).error, /closed/);
    assert.match(await (await fetch(`${sys.url}/f/${formId}`)).text(), /This form is closed\./);
    assert.equal(await completedCount(formId), 1);
  });

  it("a filled honeypot is thanked and not stored; an empty one is", async () => {
    const formId = await publishedForm({});
    assert.match(await (await fetch(`${sys.url}/f/${formId}`)).text(), /name="_website"[^>]*tabindex="-1"/);
    const bot = await postPlain(formId, [["name", "Bot"], ["_website", "http://spam.example"]]);
    assert.equal(bot.status, 200);
    assert.match(await bot.text(), /Thank you!/);
    assert.equal((await respond(formId, { answers: { name: "Bot" }, completed: true, honeypot: "x" })).status, 200);
    assert.equal(await completedCount(formId), 0);
    assert.equal((await postPlain(formId, [["name", "Person"], ["_website", ""]])).status, 200);
    assert.equal(await completedCount(formId), 1);
  });

  it("submissionsPerMinute: the form's posts past it are answered 429 with Retry-After", async () => {
    const formId = await publishedForm({ submissionsPerMinute: 2 });
    assert.equal((await respond(formId, { answers: { name: "A" } })).status, 200);
    assert.equal((await respond(formId, { answers: { name: "B" } })).status, 200);
    const third = await respond(formId, { answers: { name: "C" } });
    assert.equal(third.status, 429);
    assert.ok(Number(third.headers.get("retry-after")) >= 1);
    assert.deepEqual(await third.json(), { error: "rate limit of 2 requests a minute per form exceeded" });
  });
});
