import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { generatedFile, generateTypes } from "../scripts/generate.ts";

describe("the SDK's generated types", () => {
  it("match the document the gateway serves (run `node packages/sdk/scripts/generate.ts` after an API change)", async () => {
    const committed = readFileSync(generatedFile, "utf8");
    const fresh = await generateTypes();
    assert.ok(fresh.includes("export interface paths"), "the generator produced types");
    assert.equal(committed, fresh, "packages/sdk/src/openapi.ts is out of date: run node packages/sdk/scripts/generate.ts");
  });
});
