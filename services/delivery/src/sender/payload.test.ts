import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { envelopeOf } from "@formsvc/platform/events.ts";
import { EventSchema } from "@formsvc/proto/events/v1/events_pb.js";
import { sampleEvent, testFileLinks } from "../testing/fixtures.ts";
import { serializePayload, webhookPayload } from "./payload.ts";

describe("payload", () => {
  it("has the spec's shape, with option texts, signed file links, hidden and calculated fields and the country", () => {
    // Signed as of the submission: valid seven days from it, and the same bytes on every redelivery.
    const cvLink = testFileLinks.sign("up_1", Date.parse("2026-03-01T10:20:30.456Z"));
    assert.equal(testFileLinks.check("up_1", new URL(cvLink).searchParams.get("expires")!, new URL(cvLink).searchParams.get("signature")!, Date.parse("2026-03-05T00:00:00Z")), "valid");
    assert.deepEqual(webhookPayload(envelopeOf(sampleEvent({ eventId: "evt_123", responseId: "resp_1" })), testFileLinks), {
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
          {
            questionId: "q3",
            type: "CHECKBOXES",
            label: "Interests",
            value: ["o1", "o2"],
            options: [
              { id: "o1", text: "Music" },
              { id: "o2", text: "Art" },
              { id: "o3", text: "Sport" },
            ],
          },
          {
            questionId: "q4",
            type: "FILE",
            label: "CV",
            value: ["up_1"],
            files: [{ id: "up_1", name: "cv.pdf", url: cvLink, mimeType: "application/pdf", size: 1234 }],
          },
          { questionId: "q5", type: "EMAIL", label: "Email", value: null },
        ],
        hiddenFields: { utm_source: "newsletter" },
        calculatedFields: { score: 7 },
        respondentCountry: "DE",
        language: "de",
      },
    });
  });

  it("serialises to the same bytes for the same event, in the spec's key order", () => {
    const a = serializePayload(envelopeOf(sampleEvent({ eventId: "evt_1", responseId: "r1" })), testFileLinks);
    assert.equal(a, serializePayload(envelopeOf(sampleEvent({ eventId: "evt_1", responseId: "r1" })), testFileLinks));
    assert.deepEqual(Object.keys(JSON.parse(a)), ["eventId", "eventType", "createdAt", "data"]);
    assert.deepEqual(Object.keys(JSON.parse(a).data), ["responseId", "formId", "formName", "submittedAt", "fields", "hiddenFields", "calculatedFields", "respondentCountry", "language"]);
  });

  it("carries the respondent's confirmed address as verifiedEmail, only when the form asked for one", () => {
    const event = sampleEvent({ eventId: "evt_v", responseId: "r1" });
    event.verifiedEmail = "ada@example.com";
    const data = JSON.parse(serializePayload(envelopeOf(event), testFileLinks)).data;
    assert.equal(data.verifiedEmail, "ada@example.com");
    assert.deepEqual(Object.keys(data).slice(-2), ["language", "verifiedEmail"]);
    const partial = create(EventSchema, { event: { case: "formResponsePartial", value: { eventId: "evt_p", responseId: "r1", formId: "form_1", verifiedEmail: "ada@example.com" } } });
    assert.equal((webhookPayload(partial, testFileLinks).data as { verifiedEmail?: string }).verifiedEmail, "ada@example.com");
  });

  it("builds each event type's body: partial responses with the page, form events with the form", () => {
    const partial = create(EventSchema, {
      event: {
        case: "formResponsePartial",
        value: { eventId: "evt_p", responseId: "r1", formId: "form_1", formName: "F", savedAt: timestampFromDate(new Date("2026-03-01T10:00:00Z")), page: 2, respondentCountry: "" },
      },
    });
    assert.deepEqual(webhookPayload(partial, testFileLinks), {
      eventId: "evt_p",
      eventType: "FORM_RESPONSE_PARTIAL",
      createdAt: "2026-03-01T10:00:00.000Z",
      data: { responseId: "r1", formId: "form_1", formName: "F", savedAt: "2026-03-01T10:00:00.000Z", page: 2, fields: [], hiddenFields: {}, respondentCountry: null, language: null },
    });
    for (const [kind, eventType] of [["formPublished", "FORM_PUBLISHED"], ["formClosed", "FORM_CLOSED"], ["formDeleted", "FORM_DELETED"]] as const) {
      const changed = create(EventSchema, {
        event: { case: kind, value: { eventId: "evt_f", formId: "form_1", workspaceId: "ws_1", formName: "F", status: "closed", version: 4, changedAt: timestampFromDate(new Date("2026-03-02T00:00:00Z")) } },
      });
      assert.deepEqual(webhookPayload(changed, testFileLinks), {
        eventId: "evt_f",
        eventType,
        createdAt: "2026-03-02T00:00:00.000Z",
        data: { formId: "form_1", workspaceId: "ws_1", formName: "F", status: "closed", version: 4, changedAt: "2026-03-02T00:00:00.000Z" },
      });
    }
  });
});
