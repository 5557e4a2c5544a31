import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { appIndexFile, appNeedsBuild, ensureAppBuilt } from "./app-build.ts";

test("the app is built when it has sources and no build, and only then", () => {
  const root = mkdtempSync(join(tmpdir(), "formsvc-app-build-"));
  try {
    assert.equal(appNeedsBuild(root), false, "no app at all: nothing to build");
    mkdirSync(join(root, "app"));
    writeFileSync(join(root, "app/index.html"), "<!doctype html>");
    assert.equal(appNeedsBuild(root), true);
    assert.throws(() => ensureAppBuilt(root, { quiet: true }), /vite is not installed/);
    mkdirSync(join(root, "app/dist"));
    writeFileSync(appIndexFile(root), "<!doctype html>");
    assert.equal(appNeedsBuild(root), false);
    assert.equal(ensureAppBuilt(root), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
