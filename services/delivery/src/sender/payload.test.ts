import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sampleEvent } from "../testing/fixtures.ts";
import { serializePayload, webhookPayload } from "./payload.ts";

describe("payload", () => {
  it("has the spec's shape", () => {
    assert.deepEqual(webhookPayload(sampleEvent({ eventId: "evt_123", responseId: "resp_1" })), {
      eventId: "evt_123",
      eventType: "FORM_RESPONSE",
      createdAt: "2026-03-01T10:20:30.456Z",
      data: {
        responseId: "resp_1",
        formId: "form_1",
        formName: "Event sign-up",
        submittedAt: "2026-03-01T10:20:30.456Z",
        fields: [
          { questionId: "q1", type: "SHORT_TEXT", label: "Your full name", value: "Ada Lovelace" },
          { questionId: "q2", type: "NUMBER", label: "Age", value: 36 },
          { questionId: "q3", type: "CHECKBOXES", label: "Interests", value: ["o1", "o2"] },
          { questionId: "q4", type: "FILE", label: "CV", value: [{ name: "cv.pdf", url: "https://x/y" }] },
          { questionId: "q5", type: "EMAIL", label: "Email", value: null },
        ],
      },
    });
  });

  it("serialises to the same bytes for the same event, in the spec's key order", () => {
    const a = serializePayload(sampleEvent({ eventId: "evt_1", responseId: "r1" }));
    assert.equal(a, serializePayload(sampleEvent({ eventId: "evt_1", responseId: "r1" })));
    assert.deepEqual(Object.keys(JSON.parse(a)), ["eventId", "eventType", "createdAt", "data"]);
    assert.deepEqual(Object.keys(JSON.parse(a).data), ["responseId", "formId", "formName", "submittedAt", "fields"]);
  });
});
