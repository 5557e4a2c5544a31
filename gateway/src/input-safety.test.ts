import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Request } from "express";
import { apiRoutes } from "./routes/index.ts";
import { HttpError } from "./http-errors.ts";
import { pathId, pathIdMessages, rejectMalformedPathIds, rejectUnsafeQueryAndBody } from "./input-safety.ts";

const thrown = (fn: () => unknown): HttpError => {
  try {
    fn();
  } catch (err) {
    return err as HttpError;
  }
  throw new Error("did not throw");
};

describe("the edge's input rule", () => {
  it("knows which record each path parameter names, for every route of the table", () => {
    assert.deepEqual([...pathIdMessages("/forms/:id/submissions/:sid")], [["id", "form not found"], ["sid", "submission not found"]]);
    assert.deepEqual([...pathIdMessages("/webhooks/:id/deliveries/:did/attempts")], [["id", "webhook not found"], ["did", "delivery not found"]]);
    assert.throws(() => pathIdMessages("/gadgets/:id"), /no record is known for :id/);
    for (const route of apiRoutes({} as Parameters<typeof apiRoutes>[0])) assert.doesNotThrow(() => pathIdMessages(route.path), route.path);
  });

  it("answers a malformed path id with the 404 of its record, the first in path order", () => {
    const messages = pathIdMessages("/forms/:id/submissions/:sid");
    assert.doesNotThrow(() => rejectMalformedPathIds({ id: "F1a2B3c4D5e6F7g8", sid: "R8kq2Vn0cXs7LmPa" }, messages));
    const badSubmission = thrown(() => rejectMalformedPathIds({ id: "F1a2B3c4D5e6F7g8", sid: "R\u0000" }, messages));
    assert.deepEqual([badSubmission.status, badSubmission.message], [404, "submission not found"]);
    const both = thrown(() => rejectMalformedPathIds({ id: "x".repeat(65), sid: "" }, messages));
    assert.deepEqual([both.status, both.message], [404, "form not found"]);
    const req = { params: { id: "a b" }, route: { path: "/api-keys/:id" } } as unknown as Request;
    assert.deepEqual([thrown(() => pathId(req, "id")).status, thrown(() => pathId(req, "id")).message], [404, "API key not found"]);
  });

  it("refuses a query value or body string Postgres cannot store, naming it", () => {
    const req = (query: object, body?: unknown) => ({ query, body }) as unknown as Request;
    assert.doesNotThrow(() => rejectUnsafeQueryAndBody(req({ page: "2" }, { name: "two\nlines" })));
    assert.equal(thrown(() => rejectUnsafeQueryAndBody(req({ formId: "a\u0000" }))).message, "query.formId: must not contain control characters");
    assert.equal(thrown(() => rejectUnsafeQueryAndBody(req({}, { document: { title: "\uDBFF" } }))).message, "body.document.title: must be valid Unicode (no lone surrogates)");
    assert.equal(thrown(() => rejectUnsafeQueryAndBody(req({ tag: ["ok", "\u0007"] }))).status, 400);
  });
});
