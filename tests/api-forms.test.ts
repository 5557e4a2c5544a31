import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { formDocumentExample } from "@formsvc/form-document";
import { formSchema, questionSchema } from "@formsvc/api-records/schemas";
import { envelopeOf } from "../gateway/src/routes/paging.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

let sys: TestSystem;
let ada: Awaited<ReturnType<typeof createUserWithKey>>;
let mallory: Awaited<ReturnType<typeof createUserWithKey>>;
before(async () => {
  sys = await startTestSystem("forms");
  ada = await createUserWithKey(sys, "ada@example.com");
  mallory = await createUserWithKey(sys, "mallory@example.com", "pro");
});
after(() => sys?.stop());

const signUp = {
  ...formDocumentExample,
  calculatedFields: [{ name: "score", type: "NUMBER", expression: "1" }],
};

async function createForm(name = "Sign-up", document: object = signUp) {
  const res = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name, document });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

describe("forms over /api/v1", () => {
  it("creates a draft, assigning ids and keys the server keeps", async () => {
    const form = await createForm();
    formSchema.parse(form);
    assert.equal(form.status, "draft");
    assert.equal(form.workspaceId, ada.workspace.id);
    assert.equal(form.responseCount, 0);
    assert.equal(typeof form.settings.branding, "boolean");
    for (const block of form.document.blocks) assert.ok(block.id, "every block has an id");
    const inputs = form.document.blocks.filter((b: { type: string }) => !["HEADING", "PARAGRAPH", "PAGE_BREAK"].includes(b.type));
    for (const block of inputs) assert.match(block.key, /^[A-Za-z]\w*$/);
    assert.equal(inputs[0].key, "q_name");
    assert.ok(inputs[2].options.every((o: { id?: string }) => o.id));

    const questions = await ada.api("GET", `/forms/${form.id}/questions`);
    assert.equal(questions.status, 200);
    envelopeOf(questionSchema, "Q").parse(questions.body);
    assert.deepEqual(
      questions.body.items.map((q: { type: string; label: string }) => [q.type, q.label]),
      [
        ["SHORT_TEXT", "Your full name"],
        ["EMAIL", "email"],
        ["MULTIPLE_CHOICE", "Plan"],
        ["FILE", "Upload your CV"],
        ["HIDDEN_FIELDS", "utm_source"],
        ["RESPONDENT_COUNTRY", "Respondent country"],
        ["CALCULATED_FIELD", "score"],
      ],
    );
  });

  it("keeps a question's key when it is renamed, and versions a published form's changes", async () => {
    const form = await createForm("Versioned");
    const email = form.document.blocks[2];
    await sys.cli("form:publish", "--id", form.id);
    const fresh = (await ada.api("GET", `/forms/${form.id}`)).body;
    assert.equal(fresh.status, "published");
    const version = fresh.version;

    const document = structuredClone(fresh.document);
    document.blocks[2] = { ...email, question: "Work email", fieldName: "work_email", key: "attempted_change" };
    const patched = await ada.api("PATCH", `/forms/${form.id}`, { document });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.document.blocks[2].key, email.key);
    assert.equal(patched.body.version, version + 1);
    assert.equal(patched.body.status, "published");
    const questions = (await ada.api("GET", `/forms/${form.id}/questions`)).body.items;
    assert.deepEqual(questions.find((q: { id: string }) => q.id === email.id), { id: email.id, type: "EMAIL", label: "work_email", key: email.key });
  });

  it("lists forms newest first with paging, narrowed by workspace", async () => {
    const names = ["L1", "L2", "L3"];
    for (const name of names) await createForm(name);
    const page1 = await ada.api("GET", `/forms?workspaceId=${ada.workspace.id}&limit=2`);
    assert.equal(page1.status, 200);
    envelopeOf(formSchema, "P").parse(page1.body);
    assert.deepEqual(page1.body.items.map((f: { name: string }) => f.name), ["L3", "L2"]);
    assert.deepEqual([page1.body.page, page1.body.limit, page1.body.hasMore], [1, 2, true]);
    const page2 = await ada.api("GET", "/forms?page=2&limit=2");
    assert.equal(page2.body.items[0].name, "L1");
    for (const bad of ["page=0", "limit=0", "limit=501", "page=abc"]) {
      const res = await ada.api("GET", `/forms?${bad}`);
      assert.equal(res.status, 400, bad);
      assert.match(res.body.error, /page|limit/);
    }
    const foreign = await ada.api("GET", `/forms?workspaceId=${mallory.workspace.id}`);
    assert.equal(foreign.status, 404);
  });

  it("patches name and settings, and refuses what PATCH cannot do", async () => {
    const form = await createForm("Patch me");
    const renamed = await ada.api("PATCH", `/forms/${form.id}`, { name: "Renamed", settings: { submitLabel: "Send" } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, "Renamed");
    assert.equal(renamed.body.settings.submitLabel, "Send");
    assert.equal(renamed.body.status, "draft");

    const publish = await ada.api("PATCH", `/forms/${form.id}`, { status: "published" });
    assert.equal(publish.status, 400);
    assert.match(publish.body.error, /status/);
    assert.equal((await ada.api("GET", `/forms/${form.id}`)).body.status, "draft");

    const branding = await ada.api("PATCH", `/forms/${form.id}`, { settings: { branding: false } });
    assert.equal(branding.status, 403);
    assert.equal(typeof branding.body.error, "string");
    assert.equal((await ada.api("GET", `/forms/${form.id}`)).body.settings.branding, true);

    const proForm = await mallory.api("POST", "/forms", { workspaceId: mallory.workspace.id });
    const allowed = await mallory.api("PATCH", `/forms/${proForm.body.id}`, { settings: { branding: false } });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.body.settings.branding, false);

    const badDoc = await ada.api("PATCH", `/forms/${form.id}`, { document: { blocks: [{ type: "SHORT_TEXT" }] } });
    assert.equal(badDoc.status, 400);
    assert.match(badDoc.body.error, /document\.blocks\[0\]\.question/);
    const unknownType = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, document: { blocks: [{ type: "VIDEO", question: "?" }] } });
    assert.equal(unknownType.status, 400);
    assert.match(unknownType.body.error, /document\.blocks\[0\]/);
  });

  it("masks another user's forms in every method, exactly like missing ones", async () => {
    const form = await createForm("Private");
    const probes: [string, string, unknown?][] = [
      ["GET", `/forms/${form.id}`],
      ["PATCH", `/forms/${form.id}`, { name: "pwned" }],
      ["DELETE", `/forms/${form.id}`],
      ["GET", `/forms/${form.id}/questions`],
    ];
    for (const [method, path, body] of probes) {
      const foreign = await mallory.api(method, path, body);
      const missing = await mallory.api(method, path.replace(form.id, "F000000000000000"), body);
      assert.equal(foreign.status, 404, `${method} ${path}`);
      assert.deepEqual(foreign.body, missing.body, `${method} ${path}`);
    }
    const create = await mallory.api("POST", "/forms", { workspaceId: ada.workspace.id });
    assert.equal(create.status, 404);
    const intact = await ada.api("GET", `/forms/${form.id}`);
    assert.deepEqual([intact.status, intact.body.name], [200, "Private"]);
  });

  it("hides forms in the Trash until restored in the app", async () => {
    const form = await createForm("Trash me");
    const trashed = await ada.api("DELETE", `/forms/${form.id}`);
    assert.equal(trashed.status, 204);
    for (const [method, path, body] of [
      ["GET", `/forms/${form.id}`],
      ["PATCH", `/forms/${form.id}`, { name: "x" }],
      ["DELETE", `/forms/${form.id}`],
      ["GET", `/forms/${form.id}/questions`],
    ] as [string, string, unknown?][]) {
      assert.equal((await ada.api(method, path, body)).status, 404, `${method} ${path}`);
    }
    const listed = await ada.api("GET", "/forms?limit=500");
    assert.ok(!listed.body.items.some((f: { id: string }) => f.id === form.id));
    const restored = await sys.cli("form:restore", "--id", form.id);
    assert.equal(restored.form.status, "draft");
    assert.equal((await ada.api("GET", `/forms/${form.id}`)).status, 200);
  });

  it("closes and reopens through the operator CLI only", async () => {
    const form = await createForm("Lifecycle");
    assert.equal((await sys.cli("form:publish", "--id", form.id)).form.status, "published");
    assert.equal((await sys.cli("form:close", "--id", form.id)).form.status, "closed");
    assert.equal((await ada.api("GET", `/forms/${form.id}`)).body.status, "closed");
    assert.equal((await sys.cli("form:publish", "--id", form.id)).form.status, "published");
  });
});
