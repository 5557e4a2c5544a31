import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { responseColumns } from "@formsvc/api-records/columns";
import { csvCell, responsesCsv, type CsvSubmission } from "./csv.ts";
import { displayValue, optionTexts } from "./display.ts";

/** Pages as the export reads them. */
async function* pagesOf(...pages: CsvSubmission[][]) {
  yield* pages;
}

async function csvText(chunks: AsyncIterable<string>): Promise<string> {
  let text = "";
  for await (const chunk of chunks) text += chunk;
  return text;
}

describe("CSV of responses", () => {
  it("quotes cells holding a quote, comma, semicolon or line break", () => {
    assert.equal(csvCell("plain"), "plain");
    assert.equal(csvCell('say "hi", then go'), '"say ""hi"", then go"');
    assert.equal(csvCell("two\nlines"), '"two\nlines"');
    assert.equal(csvCell("a\rb"), '"a\rb"');
    assert.equal(csvCell("a;b"), '"a;b"');
    assert.equal(csvCell("x;=1+2"), '"x;\'=1+2"', "a part a ; starts is defused too, for a spreadsheet that splits on ; whatever the quotes");
    assert.equal(csvCell("x;=1+1;y"), '"x;\'=1+1;y"');
    assert.equal(csvCell("a,@b\t-c"), '"a,\'@b\t\'-c"');
  });

  it("defuses text starting like a formula (= + - @ tab CR), numeric-looking text too; numbers stay numbers", () => {
    assert.equal(csvCell("=HYPERLINK(\"x\")"), '"\'=HYPERLINK(""x"")"');
    assert.equal(csvCell("@SUM(A1)"), "'@SUM(A1)");
    assert.equal(csvCell("+cmd|' /C calc'!A0"), "'+cmd|' /C calc'!A0");
    assert.equal(csvCell("-x"), "'-x");
    assert.equal(csvCell("\t=1"), "'\t=1");
    assert.equal(csvCell("\r=1"), '"\'\r=1"');
    assert.equal(csvCell("=1;2"), '"\'=1;2"');
    assert.equal(csvCell("-5"), "'-5", "typed text keeps its sign as typed");
    assert.equal(csvCell("+4412345"), "'+4412345");
    assert.equal(csvCell("a=b"), "a=b", "only the first character matters");
    assert.equal(csvCell(-5), "-5");
    assert.equal(csvCell(1.5e21), "1.5e+21");
    assert.equal(csvCell(0), "0");
  });

  it("writes number answers as numbers and text answers defused", async () => {
    const subs: CsvSubmission[] = [
      {
        id: "r1",
        completed: true,
        version: 3,
        createdAt: null,
        submittedAt: null,
        answers: {
          q_n: { questionId: "b1", type: "NUMBER", label: "N", value: -3 },
          q_t: { questionId: "b2", type: "SHORT_TEXT", label: "T", value: "-3" },
          q_f: { questionId: "b3", type: "LONG_TEXT", label: "F", value: "=2+5;x" },
          q_c: { questionId: "b4", type: "DROPDOWN", label: "C", value: "o1" },
        },
      },
    ];
    const columns = ["q_n", "q_t", "q_f", "q_c"].map((key) => ({ key, label: key }));
    const csv = await csvText(responsesCsv(columns, pagesOf(subs), async () => new Map([["o1", "-minus"]])));
    assert.equal(csv.slice(1).split("\r\n")[1], `r1,completed,,,3,-3,'-3,"'=2+5;x",'-minus`);
  });

  it("has the current questions, then older versions' columns, with option texts of each response's version, page after page", async () => {
    const questions = [
      { key: "q_name", label: "Name", type: "SHORT_TEXT" },
      { key: "q_plan", label: "Plan", type: "CHECKBOXES" },
    ];
    const subs: CsvSubmission[] = [
      {
        id: "r2",
        completed: true,
        version: 2,
        createdAt: "2026-01-02T00:00:00.000Z",
        submittedAt: "2026-01-02T00:01:00.000Z",
        answers: {
          q_name: { questionId: "b1", type: "SHORT_TEXT", label: "Name", value: "Ada, Countess" },
          q_plan: { questionId: "b2", type: "CHECKBOXES", label: "Plan", value: ["o1", "o2"] },
          q_cv: { questionId: "b3", type: "FILE", label: "CV", value: ["u1"], files: [{ name: "cv.pdf", url: "http://x/files/1" }] },
        },
      },
      {
        id: "r1",
        completed: false,
        version: 1,
        createdAt: "2026-01-01T00:00:00.000Z",
        submittedAt: null,
        answers: { q_old: { questionId: "b9", type: "NUMBER", label: "Age (removed)", value: 36 } },
      },
    ];
    const columns = responseColumns(questions, subs);
    assert.deepEqual(columns.map((c) => c.label), ["Name", "Plan", "CV", "Age (removed)"]);
    const options = new Map([
      [2, new Map([["o1", "Free"], ["o2", "Pro"]])],
      [1, new Map()],
    ]);
    const csv = await csvText(responsesCsv(columns, pagesOf(subs.slice(0, 1), subs.slice(1)), async (v) => options.get(v)!));
    assert.ok(csv.startsWith("\uFEFF"));
    const lines = csv.slice(1).split("\r\n");
    assert.equal(lines[0], "Response ID,Status,Submitted at,Started at,Form version,Name,Plan,CV,Age (removed)");
    assert.equal(lines[1], 'r2,completed,2026-01-02T00:01:00.000Z,2026-01-02T00:00:00.000Z,2,"Ada, Countess","Free, Pro",cv.pdf http://x/files/1,');
    assert.equal(lines[2], "r1,partial,,2026-01-01T00:00:00.000Z,1,,,,36");
    assert.equal(lines[3], "");
  });

  it("shows answers as text: option texts, lists, numbers, nothing for null", () => {
    const options = optionTexts({ blocks: [{ type: "DROPDOWN", options: [{ id: "a", text: "Apple" }] }, { type: "HEADING", text: "x" }] });
    assert.deepEqual([...options], [["a", "Apple"]]);
    assert.equal(displayValue({ questionId: "", type: "DROPDOWN", label: "", value: "a" }, options), "Apple");
    assert.equal(displayValue({ questionId: "", type: "MULTIPLE_CHOICE", label: "", value: "gone" }, options), "gone");
    assert.equal(displayValue({ questionId: "", type: "RATING", label: "", value: 4 }, options), "4");
    assert.equal(displayValue({ questionId: "", type: "SHORT_TEXT", label: "", value: null }, options), "");
    assert.equal(displayValue({ questionId: "", type: "SIGNATURE", label: "", value: ["u"], files: [{ name: "signature.png", url: "u" }] }, options), "signature.png");
    assert.deepEqual(optionTexts(null), new Map());
  });
});
