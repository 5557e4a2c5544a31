import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { describeFileStore } from "../testing/file-store-contract.ts";
import { createLocalFileStore, defaultFilesDir } from "./local-file-store.ts";

const root = mkdtempSync(join(tmpdir(), "submissions-files-"));
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
describeFileStore("local directory", () => createLocalFileStore(join(root, `store-${++n}`, "files")));

describe("local file store", () => {
  it("keeps files under DATA_DIR/files/<key>, creating the directory on first put", async () => {
    const dataDir = join(root, "data");
    const dir = defaultFilesDir(dataDir);
    assert.equal(dir, join(dataDir, "files"));
    const store = createLocalFileStore(dir);
    assert.equal(await store.get("missing"), undefined);
    await store.put("upload1", new TextEncoder().encode("bytes on disk"));
    assert.equal(readFileSync(join(dir, "upload1"), "utf8"), "bytes on disk");
    // No temporary file is left behind.
    assert.deepEqual(readdirSync(dir), ["upload1"]);
    await store.delete("upload1");
    assert.deepEqual(readdirSync(dir), []);
  });
});
