import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  answerCelValue,
  answerText,
  choiceBlockTypes,
  inputBlockTypes,
  questionTypes,
  scaleOf,
  takesOptions,
  takesPlaceholder,
  takesUploads,
  typesAnswering,
} from "./question-types.ts";

describe("question types", () => {
  it("derive the lists of types from their answer shapes, in the editor's order", () => {
    assert.deepEqual(inputBlockTypes, Object.keys(questionTypes));
    assert.deepEqual(choiceBlockTypes, ["MULTIPLE_CHOICE", "CHECKBOXES", "DROPDOWN", "MULTI_SELECT", "RANKING"]);
    assert.deepEqual(typesAnswering("uploads"), ["FILE", "SIGNATURE"]);
    assert.deepEqual(typesAnswering("number", "steps"), ["NUMBER", "RATING", "LINEAR_SCALE", "NPS"]);
    assert.deepEqual(typesAnswering("consent"), ["CONSENT"]);
  });

  it("say which types take options, uploads and a placeholder; other columns take none", () => {
    assert.deepEqual(inputBlockTypes.filter(takesOptions), choiceBlockTypes);
    assert.deepEqual(inputBlockTypes.filter(takesUploads), ["FILE", "SIGNATURE"]);
    assert.deepEqual(inputBlockTypes.filter(takesPlaceholder), ["SHORT_TEXT", "LONG_TEXT", "EMAIL", "NUMBER", "PHONE", "URL", "MULTI_SELECT"]);
    for (const column of ["HIDDEN_FIELDS", "RESPONDENT_COUNTRY", "CALCULATED_FIELD", "toString", "constructor"]) {
      assert.equal(takesOptions(column) || takesUploads(column) || takesPlaceholder(column), false, column);
    }
  });

  it("give each scale its steps: the type's, the block's own ends where the type lets it have them", () => {
    assert.deepEqual(scaleOf({ type: "RATING" }), { min: 1, max: 5 });
    assert.deepEqual(scaleOf({ type: "RATING", max: 3 }), { min: 1, max: 3 });
    assert.deepEqual(scaleOf({ type: "LINEAR_SCALE", min: 0, max: 7 }), { min: 0, max: 7 });
    assert.deepEqual(scaleOf({ type: "NPS", min: 3, max: 4 }), { min: 0, max: 10 });
  });

  it("give CEL whole steps as int, numbers as double, lists as lists", () => {
    assert.equal(answerCelValue("RATING", 4), 4n);
    assert.equal(answerCelValue("NUMBER", 4), 4);
    assert.equal(answerCelValue("CALCULATED_FIELD", 4), 4);
    assert.deepEqual(answerCelValue("CHECKBOXES", ["a", "b"]), ["a", "b"]);
    assert.equal(answerCelValue(undefined, "x"), "x");
  });

  it("read as people read them: option texts, file names, lists joined, nothing when unanswered", () => {
    const optionText = (id: string) => ({ a: "Apple", b: "Banana" })[id];
    assert.equal(answerText("CHECKBOXES", ["a", "b", "gone"], { optionText }), "Apple, Banana, gone");
    assert.equal(answerText("DROPDOWN", "", { optionText }), "");
    assert.equal(answerText("FILE", ["u1", "u2"], { optionText, fileNames: ["cv.pdf", "photo.png"] }), "cv.pdf, photo.png");
    assert.equal(answerText("RATING", 4, { optionText }), "4");
    assert.equal(answerText("SHORT_TEXT", null, { optionText }), "");
    assert.equal(answerText("HIDDEN_FIELDS", "newsletter", { optionText }), "newsletter");
    const gridText = (id: string) => ({ r1: "Food", r2: "Music", c1: "Bad", c2: "Good" })[id];
    assert.equal(answerText("MATRIX", { r1: "c2", r2: ["c1", "c2"] }, { optionText: gridText }), "Food: Good; Music: Bad, Good");
    assert.equal(answerText("RANKING", ["b", "a"], { optionText }), "Banana, Apple");
    assert.equal(answerText("CONSENT", true, { optionText }), "true");
  });
});
