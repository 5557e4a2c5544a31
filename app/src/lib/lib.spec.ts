import { describe, expect, it } from "vitest";
import { cookieValue, errorMessage } from "../api.ts";
import { appPath, matchRoute } from "../router.tsx";
import { responseColumns } from "@formsvc/api-records/columns";
import { columnsWithAnswers } from "./columns.ts";
import { blockTypes, cleanDocument, documentProblems, isChoiceType, moveItem, newBlock, type EditableBlock } from "./document.ts";
import { speak } from "../i18n/messages.ts";
import { formatBytes, formatDateTime, formatRelative, statusLabel } from "./format.ts";
import type { Question, Submission } from "../types.ts";

describe("router", () => {
  it("maps browser paths under /app to app paths", () => {
    expect(appPath("/app")).toBe("/");
    expect(appPath("/app/")).toBe("/");
    expect(appPath("/app/forms/abc/edit/")).toBe("/forms/abc/edit");
    expect(appPath("/elsewhere")).toBe("/");
  });

  it("matches patterns with parameters, and nothing else", () => {
    expect(matchRoute("/forms/:id/:tab", "/forms/abc/responses")).toEqual({ id: "abc", tab: "responses" });
    expect(matchRoute("/forms/:id", "/forms/a%20b")).toEqual({ id: "a b" });
    expect(matchRoute("/forms/:id", "/forms/abc/edit")).toBeUndefined();
    expect(matchRoute("/trash", "/forms")).toBeUndefined();
    expect(matchRoute("/forms/:id", "/forms/%E0%A4%A")).toBeUndefined();
  });
});

describe("api helpers", () => {
  it("reads a cookie by name", () => {
    expect(cookieValue("a=1; formsvc_csrf=abc%2Fdef; b=2", "formsvc_csrf")).toBe("abc/def");
    expect(cookieValue("formsvc_csrfx=1", "formsvc_csrf")).toBeUndefined();
  });

  it("prefers the server's error message", () => {
    expect(errorMessage(400, { error: "body.name: is required" })).toBe("body.name: is required");
    expect(errorMessage(502, "<html>")).toMatch(/went wrong on the server/);
    expect(errorMessage(0, null)).toMatch(/cannot be reached/);
    expect(errorMessage(418, {})).toBe("The request failed (HTTP 418).");
  });
});

describe("document editing", () => {
  it("makes a valid new block of every type", () => {
    for (const type of blockTypes) {
      const block = newBlock(type);
      expect(block.type).toBe(type);
      expect(block.id).toMatch(/^[A-Za-z0-9]{12}$/);
      expect(documentProblems({ blocks: [block] })).toEqual([]);
      if (isChoiceType(type)) expect(block.options).toHaveLength(2);
    }
    expect(newBlock("RATING").max).toBe(5);
  });

  it("moves items up and down and never past the ends", () => {
    expect(moveItem(["a", "b", "c"], 2, -1)).toEqual(["a", "c", "b"]);
    expect(moveItem(["a", "b", "c"], 0, 1)).toEqual(["b", "a", "c"]);
    expect(moveItem(["a", "b", "c"], 0, -1)).toEqual(["a", "b", "c"]);
    expect(moveItem(["a", "b", "c"], 2, 1)).toEqual(["a", "b", "c"]);
  });

  it("cleans a document for saving: only what each type takes, no blank optional texts", () => {
    const blocks: EditableBlock[] = [
      { id: "h", type: "HEADING", text: "Hi", question: "stale" },
      { id: "q", key: "q_name", type: "SHORT_TEXT", question: "Name", fieldName: "  ", description: "", required: true, placeholder: "Ada", options: [{ text: "x" }] },
      { id: "c", type: "DROPDOWN", question: "Pick", options: [{ id: "o1", text: "One" }, { text: "Two" }], placeholder: "nope", required: false },
      { id: "n", type: "NUMBER", question: "Age", min: 0, max: Number.NaN },
      { id: "p", type: "PAGE_BREAK", text: "x" },
    ];
    expect(
      cleanDocument({ title: "  ", blocks, hiddenFields: [{ name: " utm " }], calculatedFields: [{ name: "s", type: "NUMBER", expression: "1" }] }),
    ).toEqual({
      blocks: [
        { id: "h", type: "HEADING", text: "Hi" },
        { id: "q", key: "q_name", type: "SHORT_TEXT", question: "Name", required: true, placeholder: "Ada" },
        { id: "c", type: "DROPDOWN", question: "Pick", options: [{ id: "o1", text: "One" }, { text: "Two" }] },
        { id: "n", type: "NUMBER", question: "Age", min: 0 },
        { id: "p", type: "PAGE_BREAK" },
      ],
      hiddenFields: [{ name: "utm" }],
      calculatedFields: [{ name: "s", type: "NUMBER", expression: "1" }],
    });
  });

  it("names each problem it can see before saving", () => {
    const problems = documentProblems({
      blocks: [
        { type: "EMAIL", question: " " },
        { type: "CHECKBOXES", question: "Q", options: [{ text: "" }] },
        { type: "NUMBER", question: "N", min: 5, max: 1 },
      ],
      hiddenFields: [{ name: "ok" }, { name: "1bad" }],
      calculatedFields: [
        { name: "ok", type: "TEXT", expression: "" },
        { name: "broken", type: "NUMBER", expression: "stars * (" },
        { name: "costly", type: "NUMBER", expression: "l.all(a, l.all(b, l.all(c, a + b + c > 0)))" },
        { name: "fine", type: "NUMBER", expression: "l.exists(a, l.exists(b, a == b)) ? 1.0 : 0.0" },
      ],
    });
    expect(problems).toEqual([
      "Block 1 (Email): the question must not be empty.",
      "Block 2 (Checkboxes): option 1 must not be empty.",
      "Block 3 (Number): the largest answer must not be less than the smallest.",
      "Hidden field 2: the name must start with a letter or _ and use only letters, digits and _.",
      'Calculated field 1: the name "ok" is used twice.',
      "Calculated field 1 formula: is empty.",
      "Calculated field 2 formula: does not parse: 1:7: found * but expecting end of input.",
      "Calculated field 3 formula: runs 3 comprehensions inside one another; at most 2.",
    ]);
  });
});

describe("response columns", () => {
  it("keeps the current questions first, then older versions' columns under their old label", () => {
    const questions: Question[] = [
      { id: "b1", type: "SHORT_TEXT", label: "Name", key: "q_name" },
      { id: "meta:country", type: "RESPONDENT_COUNTRY", label: "Respondent country", key: "meta:country" },
    ];
    const subs: Pick<Submission, "answers">[] = [
      { answers: { q_name: { questionId: "b1", type: "SHORT_TEXT", label: "Full name", value: "Ada", display: "Ada" } } },
      { answers: { q_age: { questionId: "b2", type: "NUMBER", label: "Age", value: 3, display: "3" } } },
    ];
    const columns = responseColumns(questions, subs);
    expect(columns.map((c) => [c.key, c.label, c.older])).toEqual([
      ["q_name", "Name", false],
      ["meta:country", "Respondent country", false],
      ["q_age", "Age", true],
    ]);
    expect(columnsWithAnswers(columns, [subs[0]]).map((c) => c.key)).toEqual(["q_name", "meta:country"]);
  });
});

describe("format", () => {
  it("says how long ago", () => {
    const now = Date.parse("2026-05-01T12:00:00Z");
    expect(formatRelative("2026-05-01T11:59:50Z", now)).toBe("just now");
    expect(formatRelative("2026-05-01T11:55:00Z", now)).toBe("5 minutes ago");
    expect(formatRelative("2026-05-01T09:00:00Z", now)).toBe("3 hours ago");
    expect(formatRelative("2026-04-29T12:00:00Z", now)).toBe("2 days ago");
    expect(formatRelative(null, now)).toBe("never");
  });

  it("says it in the language spoken, with its locale's dates, numbers and sizes", () => {
    const now = Date.parse("2026-05-01T12:00:00Z");
    try {
      speak("de-AT", ["de-AT", "en"]);
      expect(formatRelative("2026-05-01T11:55:00Z", now)).toBe("vor 5 Minuten");
      expect(formatRelative(null, now)).toBe("nie");
      expect(formatBytes(1536)).toBe("1,5 KB");
      expect(formatBytes(1)).toBe("1 Byte");
      expect(formatDateTime("2026-05-15T12:00:00Z")).toMatch(/^15\. Mai 2026/);
      expect(statusLabel("draft")).toBe("Entwurf");
    } finally {
      speak("en");
    }
    expect(statusLabel("draft")).toBe("Draft");
  });
});
