import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { runInNewContext } from "node:vm";
import { evaluateLogic, type LogicDocument } from "@formsvc/form-document/logic";
import { buildFormLogic, formLogicFile } from "./form-logic-build.ts";

describe("form-logic.js (the browser copy of the logic evaluator)", () => {
  it("is what form-logic-build.ts builds from the sources now (else run: node gateway/src/hosted/form-logic-build.ts)", () => {
    assert.equal(readFileSync(formLogicFile, "utf8"), buildFormLogic());
  });

  it("evaluates rules as the server does", () => {
    const context: { formsvcLogic?: { evaluateLogic: typeof evaluateLogic } } = {};
    runInNewContext(readFileSync(formLogicFile, "utf8"), context);
    const doc: LogicDocument = {
      blocks: [
        { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE" },
        { id: "b_company", key: "company", type: "SHORT_TEXT", required: true },
        { id: "pb", type: "PAGE_BREAK" },
        { id: "b_team", key: "team", type: "NUMBER" },
        { id: "pb2", type: "PAGE_BREAK" },
        { id: "b_end", key: "end", type: "RATING" },
      ],
      logic: [
        { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "pro" }] }, then: [{ action: "SHOW", block: "b_company" }] },
        { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "free" }] }, then: [{ action: "JUMP", page: 3 }] },
        { when: { conditions: [{ question: "b_company", operator: "IS_ANSWERED" }] }, then: [{ action: "SET", field: "tier", value: "business" }] },
      ],
    };
    assert.deepEqual([...evaluateLogic(doc, { plan: "pro", company: "Acme" }).set], [["tier", "business"]]);
    for (const answers of [{}, { plan: "pro", company: "Acme" }, { plan: "free", company: "x", team: 3 }]) {
      const browser = context.formsvcLogic!.evaluateLogic(doc, answers);
      const server = evaluateLogic(doc, answers);
      // Sets, maps and objects of another realm: compared by their contents.
      assert.deepEqual(JSON.parse(JSON.stringify({ ...browser, hidden: [...browser.hidden], required: [...browser.required], set: [...browser.set] })), {
        ...server,
        hidden: [...server.hidden],
        required: [...server.required],
        set: [...server.set],
      });
    }
  });
});
