import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NoticeKeptCache, type NoticeKeptCacheOptions } from "./notice-kept-cache.ts";

function listeningCache(options: NoticeKeptCacheOptions = {}) {
  const cache = new NoticeKeptCache<string>(options);
  cache.listening();
  return cache;
}

describe("NoticeKeptCache", () => {
  it("holds nothing until its notice connection listens, and nothing after it is lost", () => {
    const cache = new NoticeKeptCache<string>();
    cache.remember("a", "A", cache.generation);
    assert.equal(cache.get("a"), undefined);
    cache.listening();
    cache.remember("a", "A", cache.generation);
    assert.equal(cache.get("a"), "A");
    cache.lost();
    assert.equal(cache.size, 0);
    cache.remember("a", "A", cache.generation);
    assert.equal(cache.get("a"), undefined);
  });

  it("does not keep a read begun before an invalidation of any key", () => {
    const cache = listeningCache();
    const before = cache.generation;
    cache.forget("other");
    cache.remember("a", "A", before);
    assert.equal(cache.get("a"), undefined);
    cache.remember("a", "A", cache.generation);
    assert.equal(cache.get("a"), "A");
  });

  it("forgets one key, the values that match, or everything", () => {
    const cache = listeningCache();
    for (const key of ["a", "b", "c"]) cache.remember(key, key.toUpperCase(), cache.generation);
    cache.forget("a");
    assert.deepEqual([cache.get("a"), cache.size], [undefined, 2]);
    cache.forgetWhere((value) => value === "B");
    assert.deepEqual([cache.get("b"), cache.get("c")], [undefined, "C"]);
    cache.forgetAll();
    assert.equal(cache.size, 0);
  });

  it("keeps at most maxEntries, the least recently used going first", () => {
    const cache = listeningCache({ maxEntries: 2 });
    cache.remember("1", "one", cache.generation);
    cache.remember("2", "two", cache.generation);
    assert.ok(cache.get("1"));
    cache.remember("3", "three", cache.generation);
    assert.equal(cache.size, 2);
    assert.equal(cache.get("2"), undefined);
    assert.ok(cache.get("1"));
    assert.ok(cache.get("3"));
  });

  it("reads a value again after the TTL, whatever the notices said", () => {
    let now = 0;
    const cache = listeningCache({ ttlMs: 1000, now: () => now });
    cache.remember("1", "one", cache.generation);
    now = 999;
    assert.ok(cache.get("1"));
    now = 1000;
    assert.equal(cache.get("1"), undefined);
    assert.equal(cache.size, 0);
  });
});
