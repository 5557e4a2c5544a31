import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { ResponseCompletedSchema, type ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import { answerText, notificationMail, receiptAddress, receiptMail } from "./mails.ts";

function field(questionId: string, type: string, label: string, value: unknown, extra: { options?: { id: string; text: string }[]; files?: { id: string; name: string }[] } = {}) {
  return {
    questionId,
    type,
    label,
    value: fromJson(ValueSchema, value as never),
    options: extra.options ?? [],
    files: (extra.files ?? []).map((f) => ({ ...f, contentType: "application/pdf", size: 10n })),
  };
}

const event: ResponseCompleted = create(ResponseCompletedSchema, {
  eventId: "E1",
  responseId: "R1",
  formId: "F1",
  workspaceId: "W1",
  formName: "Sign-up <2026>",
  fields: [
    field("name", "SHORT_TEXT", "Name", "Ada\nLovelace"),
    field("colours", "CHECKBOXES", "Colours", ["r", "g"], { options: [{ id: "r", text: "Red" }, { id: "g", text: "Green & more" }] }),
    field("cv", "FILE", "CV", ["U1"], { files: [{ id: "U1", name: "cv.pdf" }] }),
    field("age", "NUMBER", "Age", 36),
    field("skipped", "SHORT_TEXT", "Skipped", null),
    field("email", "EMAIL", "Email", " ada@example.com "),
    field("other", "SHORT_TEXT", "Other email", "ada@example.com"),
  ],
});

describe("response mails", () => {
  it("show each answer as people read it: option texts, file names, no answer", () => {
    assert.deepEqual(
      event.fields.map(answerText),
      ["Ada\nLovelace", "Red, Green & more", "cv.pdf", "36", "(no answer)", " ada@example.com ", "ada@example.com"],
    );
  });

  it("show a matrix row by row with its rows' and columns' texts, and a consent as true", () => {
    const grid = create(ResponseCompletedSchema, {
      fields: [
        {
          questionId: "b_grid",
          type: "MATRIX",
          label: "How was it?",
          value: fromJson(ValueSchema, { food: "good", music: ["ok", "bad"] }),
          rows: [{ id: "food", text: "Food" }, { id: "music", text: "Music" }],
          columns: [{ id: "bad", text: "Bad" }, { id: "ok", text: "OK" }, { id: "good", text: "Good" }],
        },
        { questionId: "b_terms", type: "CONSENT", label: "Terms", value: fromJson(ValueSchema, true) },
      ],
    });
    assert.deepEqual(grid.fields.map(answerText), ["Food: Good; Music: OK, Bad", "true"]);
  });

  it("notify with every question and answer and a link to the response; the HTML escapes them", () => {
    const mail = notificationMail("owner@example.com", event, "https://forms.example.com");
    assert.equal(mail.subject, "New response: Sign-up <2026>");
    assert.match(mail.text, /Name\n {2}Ada\n {2}Lovelace\n\nColours\n {2}Red, Green & more\n/);
    assert.ok(mail.text.includes("https://forms.example.com/app/forms/F1/responses/R1"));
    assert.ok(mail.html.includes("Green &#38; more") && mail.html.includes("Sign-up &#60;2026&#62;"));
    assert.ok(!mail.html.includes("<2026>"));
    assert.ok(!mail.text.includes("/files/"), "no file links");
  });

  it("a receipt copies the answers without a link into the app", () => {
    const mail = receiptMail("ada@example.com", event);
    assert.equal(mail.to, "ada@example.com");
    assert.match(mail.text, /CV\n {2}cv\.pdf\n/);
    assert.ok(!mail.text.includes("/app/"));
  });

  it("the receipt goes only to an EMAIL question's answer that is one address", () => {
    assert.equal(receiptAddress(event, "email"), "ada@example.com");
    assert.equal(receiptAddress(event, "other"), undefined, "not an EMAIL question");
    assert.equal(receiptAddress(event, "missing"), undefined);
    const withValue = (value: unknown) => create(ResponseCompletedSchema, { fields: [field("email", "EMAIL", "Email", value)] });
    assert.equal(receiptAddress(withValue("a@example.com\r\nBcc: b@example.com"), "email"), undefined);
    assert.equal(receiptAddress(withValue("a@b@example.com"), "email"), undefined);
    assert.equal(receiptAddress(withValue(null), "email"), undefined);
    assert.equal(receiptAddress(withValue(`${"a".repeat(250)}@example.com`), "email"), undefined);
  });
});
