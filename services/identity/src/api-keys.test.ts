import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import {
  apiKeyMatches,
  apiKeyPattern,
  apiKeyPrefix,
  digestsEqual,
  generateApiKey,
  hashSecret,
  isWellFormedApiKey,
  secretDigest,
} from "./api-keys.ts";

describe("generateApiKey", () => {
  it("is fk- followed by base64url of 32 random bytes", () => {
    const key = generateApiKey();
    assert.match(key, /^fk-[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(key.slice(3), "base64url").length, 32);
    assert.ok(isWellFormedApiKey(key));
  });

  it("never repeats", () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey()));
    assert.equal(keys.size, 200);
  });
});

describe("isWellFormedApiKey", () => {
  it("refuses anything that is not fk- and at least 43 base64url characters", () => {
    const good = generateApiKey();
    for (const bad of [
      "",
      "fk-",
      "fk-short",
      good.slice(0, -1),
      `FK-${good.slice(3)}`,
      `sk-${good.slice(3)}`,
      `${good} `,
      ` ${good}`,
      `${good.slice(0, 10)}+${good.slice(11)}`,
      `${good.slice(0, 10)}/${good.slice(11)}`,
      `${good}=`,
      `${good}\n`,
    ]) {
      assert.equal(isWellFormedApiKey(bad), false, JSON.stringify(bad));
    }
    assert.equal(isWellFormedApiKey(`${good}AB`), true);
    assert.equal(apiKeyPattern.source, "^fk-[A-Za-z0-9_-]{43,}$");
  });
});

describe("apiKeyPrefix", () => {
  it("is the first 12 characters", () => {
    const key = generateApiKey();
    const prefix = apiKeyPrefix(key);
    assert.equal(prefix.length, 12);
    assert.ok(key.startsWith(prefix));
    assert.ok(prefix.startsWith("fk-"));
    assert.equal(apiKeyPrefix("fk-AbCdEfGhIjKlMn"), "fk-AbCdEfGhI");
  });
});

describe("hashSecret", () => {
  it("is the hex SHA-256 digest", () => {
    const key = generateApiKey();
    const expected = createHash("sha256").update(key).digest("hex");
    assert.equal(hashSecret(key), expected);
    assert.match(hashSecret(key), /^[0-9a-f]{64}$/);
    assert.deepEqual(secretDigest(key), Buffer.from(expected, "hex"));
    assert.notEqual(hashSecret(key), hashSecret(generateApiKey()));
  });
});

describe("digestsEqual", () => {
  it("compares bytes and hex in constant time, and refuses different lengths", () => {
    const a = secretDigest("one");
    const b = secretDigest("two");
    assert.equal(digestsEqual(a, Buffer.from(a)), true);
    assert.equal(digestsEqual(a, a.toString("hex")), true);
    assert.equal(digestsEqual(a.toString("hex").toUpperCase(), a), true);
    assert.equal(digestsEqual(a, b), false);
    assert.equal(digestsEqual(a, a.subarray(0, 31)), false);
    assert.equal(digestsEqual(a, `${a.toString("hex")}0`), false);
    assert.equal(digestsEqual(a, "zz".repeat(32)), false);
    assert.equal(digestsEqual("", ""), false);
  });

  it("apiKeyMatches checks a key against its stored hash", () => {
    const key = generateApiKey();
    const stored = hashSecret(key);
    assert.equal(apiKeyMatches(key, stored), true);
    assert.equal(apiKeyMatches(generateApiKey(), stored), false);
    assert.equal(apiKeyMatches(key.slice(0, -1), stored), false);
  });
});
