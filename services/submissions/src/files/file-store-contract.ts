// The behaviour every FileStore must have, as tests: the local store runs them now, an S3 adapter
// runs the same ones later. Imported by tests only.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FileStore } from "./file-store.ts";

export function describeFileStore(name: string, makeStore: () => Promise<FileStore> | FileStore): void {
  describe(`${name} (FileStore contract)`, () => {
    const bytes = (text: string) => new TextEncoder().encode(text);

    it("gets back what was put, and undefined for a key never put", async () => {
      const store = await makeStore();
      await store.put("abc-123_X", bytes("hello"));
      assert.deepEqual(await store.get("abc-123_X"), bytes("hello"));
      assert.equal(await store.get("never-put"), undefined);
    });

    it("replaces on a second put of the same key", async () => {
      const store = await makeStore();
      await store.put("k1", bytes("first version, longer"));
      await store.put("k1", bytes("second"));
      assert.deepEqual(await store.get("k1"), bytes("second"));
    });

    it("stores binary content byte for byte", async () => {
      const store = await makeStore();
      const content = new Uint8Array(70_000).map((_, i) => (i * 31) % 256);
      await store.put("binary", content);
      assert.deepEqual(await store.get("binary"), content);
    });

    it("deletes, and deleting a missing key is not an error", async () => {
      const store = await makeStore();
      await store.put("gone", bytes("x"));
      await store.delete("gone");
      assert.equal(await store.get("gone"), undefined);
      await store.delete("gone");
      await store.delete("never-there");
      assert.equal(await store.get("never-there"), undefined);
    });

    it("refuses keys that could name something outside the store", async () => {
      const store = await makeStore();
      for (const key of ["", "../escape", "a/b", "a\\b", ".hidden", "with space", "x".repeat(129)]) {
        await assert.rejects(store.put(key, bytes("x")), /invalid storage key/, key);
        await assert.rejects(store.get(key), /invalid storage key/, key);
        await assert.rejects(store.delete(key), /invalid storage key/, key);
      }
    });
  });
}
