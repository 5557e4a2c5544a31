import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { UserSchema } from "@formsvc/proto/identity/v1/identity_pb.js";
import { ApiKeyCache, type VerifiedApiKey } from "./api-key-cache.ts";

const key = (n: number, userId = "u1"): VerifiedApiKey => ({
  apiKeyId: `k${n}`,
  keyHash: n.toString(16).padStart(64, "0"),
  user: create(UserSchema, { id: userId }),
  lastUsedAt: null,
});

function listeningCache(options: ConstructorParameters<typeof ApiKeyCache>[0] = {}) {
  const cache = new ApiKeyCache(options);
  cache.listening();
  return cache;
}

describe("ApiKeyCache", () => {
  it("holds nothing until its notice connection listens", () => {
    const cache = new ApiKeyCache();
    cache.remember(key(1), cache.generation);
    assert.equal(cache.lookup(key(1).keyHash), undefined);
    cache.listening();
    cache.remember(key(1), cache.generation);
    assert.equal(cache.lookup(key(1).keyHash)?.apiKeyId, "k1");
  });

  it("the notice connection's loss drops every key and holds none until it listens again", () => {
    const cache = listeningCache();
    for (let n = 1; n <= 3; n++) cache.remember(key(n), cache.generation);
    assert.equal(cache.size, 3);
    cache.lost();
    assert.equal(cache.size, 0);
    cache.remember(key(1), cache.generation);
    assert.equal(cache.lookup(key(1).keyHash), undefined);
  });

  it("a read begun before a revocation is not kept", () => {
    const cache = listeningCache();
    const before = cache.generation;
    cache.revoke("key:k9");
    cache.remember(key(1), before);
    assert.equal(cache.lookup(key(1).keyHash), undefined);
    const beforeLoss = cache.generation;
    cache.lost();
    cache.listening();
    cache.remember(key(1), beforeLoss);
    assert.equal(cache.lookup(key(1).keyHash), undefined);
  });

  it("drops a key by its id, a user's keys by the user, everything on a notice it does not know", () => {
    const cache = listeningCache();
    cache.remember(key(1, "ada"), cache.generation);
    cache.remember(key(2, "ada"), cache.generation);
    cache.remember(key(3, "bob"), cache.generation);
    cache.revoke("key:k1");
    assert.equal(cache.lookup(key(1).keyHash), undefined);
    assert.equal(cache.size, 2);
    cache.revoke("user:ada");
    assert.equal(cache.lookup(key(2).keyHash), undefined);
    assert.equal(cache.lookup(key(3).keyHash)?.apiKeyId, "k3");
    cache.revoke("workspace:w1");
    assert.equal(cache.size, 0);
  });
});
