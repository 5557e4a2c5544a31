import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { readVersion, version } from "./version.ts";

describe("version", () => {
  it("is the root package.json's semantic version, the one place it is written", () => {
    const root = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8"));
    assert.equal(version, root.version);
    assert.match(version, /^\d+\.\d+\.\d+/);
  });

  it("has its entry in CHANGELOG.md", () => {
    const changelog = readFileSync(new URL("../../../CHANGELOG.md", import.meta.url), "utf8");
    assert.match(changelog, /^## \[Unreleased\]$/m);
    assert.ok(changelog.includes(`\n## [${version}] - `), `CHANGELOG.md has a "## [${version}] - <date>" entry`);
  });

  it("refuses a package.json without a semantic version", () => {
    const dir = mkdtempSync(join(tmpdir(), "version-"));
    for (const bad of [{}, { version: "1.0" }, { version: "v1.0.0" }, { version: 1 }]) {
      writeFileSync(join(dir, "package.json"), JSON.stringify(bad));
      assert.throws(() => readVersion(join(dir, "package.json")), /semantic version/);
    }
    writeFileSync(join(dir, "package.json"), JSON.stringify({ version: "2.1.0-rc.1" }));
    assert.equal(readVersion(join(dir, "package.json")), "2.1.0-rc.1");
  });
});
