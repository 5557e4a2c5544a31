import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { createFormBodySchema, updateFormBodySchema } from "./bodies.ts";
import { describeZodError } from "./errors.ts";

function bodyError(schema: z.ZodType, body: unknown): string {
  const result = schema.safeParse(body);
  assert.equal(result.success, false);
  return describeZodError(result.error!);
}

test("create body: workspaceId required, name and document optional", () => {
  assert.deepEqual(createFormBodySchema.parse({ workspaceId: "w1" }), { workspaceId: "w1" });
  const full = { workspaceId: "w1", name: "Sign-up", document: { blocks: [{ type: "SHORT_TEXT", question: "Name" }] } };
  assert.deepEqual(createFormBodySchema.parse(full), full);
  assert.match(bodyError(createFormBodySchema, {}), /^workspaceId: is required/);
  assert.match(bodyError(createFormBodySchema, { workspaceId: "" }), /^workspaceId: /);
  assert.match(bodyError(createFormBodySchema, { workspaceId: "w", name: "" }), /^name: /);
  assert.match(bodyError(createFormBodySchema, { workspaceId: "w", name: "x".repeat(201) }), /^name: /);
  assert.equal(bodyError(createFormBodySchema, { workspaceId: "w", status: "published" }), "status: unknown property");
  assert.match(
    bodyError(createFormBodySchema, { workspaceId: "w", document: { blocks: [{ type: "EMAIL", question: "" }] } }),
    /^document\.blocks\[0\]\.question: /,
  );
});

test("update body: name, document and settings, nothing else", () => {
  assert.deepEqual(updateFormBodySchema.parse({}), {});
  assert.deepEqual(updateFormBodySchema.parse({ settings: { branding: false } }), { settings: { branding: false } });
  assert.equal(bodyError(updateFormBodySchema, { status: "published" }), "status: unknown property");
  assert.equal(bodyError(updateFormBodySchema, { settings: { colour: "red" } }), "settings.colour: unknown property");
  assert.match(bodyError(updateFormBodySchema, { document: { blocks: [{ type: "RATING", question: "r", max: 20 }] } }), /^document\.blocks\[0\]\.max: /);
  assert.match(bodyError(updateFormBodySchema, { name: "   " }), /^name: must not be blank/);
});

test("request bodies convert to JSON Schema for the OpenAPI document", () => {
  const create = z.toJSONSchema(createFormBodySchema, { io: "input" }) as Record<string, any>;
  assert.deepEqual(create.required, ["workspaceId"]);
  assert.equal(create.additionalProperties, false);
  assert.equal(create.properties.document.$ref, "#/$defs/FormDocument");
  assert.equal(create.$defs.FormDocument.type, "object");
  const update = z.toJSONSchema(updateFormBodySchema, { io: "input" }) as Record<string, any>;
  assert.deepEqual(Object.keys(update.properties).sort(), ["document", "name", "settings"]);
  assert.equal(update.properties.settings.additionalProperties, false);
});
