// The behaviour every FileStore must have, as tests: the local directory and the S3 store (against
// S3Mock) run the same ones. Imported by tests only.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FileStore } from "../files/file-store.ts";

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

    it("stores a stream chunk by chunk, larger than one multipart part", async () => {
      const store = await makeStore();
      const chunk = new Uint8Array(1024 * 1024).map((_, i) => (i * 7) % 251);
      const chunks = 9;
      async function* stream() {
        for (let i = 0; i < chunks; i++) yield chunk.map((b) => (b + i) % 256);
      }
      await store.put("streamed", stream(), { name: "big.bin", contentType: "application/octet-stream" });
      const back = await store.get("streamed");
      assert.equal(back?.length, chunks * chunk.length);
      for (let i = 0; i < chunks; i++) assert.deepEqual(back!.subarray(i * chunk.length, (i + 1) * chunk.length), chunk.map((b) => (b + i) % 256));
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
