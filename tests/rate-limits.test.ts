import assert from "node:assert/strict";
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { freePort } from "@formsvc/launcher/ports.ts";
import { entryOf } from "@formsvc/launcher/system.ts";
import { apiClient, createUserWithKey, startTestSystem, testRedisUrl, type TestSystem } from "./support/system.ts";

// Two gateways over one set of services, sharing the machine's real Redis.
let sys: TestSystem;
let second: ChildProcess;
let secondUrl: string;
before(async () => {
  sys = await startTestSystem("ratelimits", {
    REDIS_URL: testRedisUrl,
    RATE_LIMIT_PER_KEY: "20",
    RATE_LIMIT_PER_IP: "30",
    TRUST_PROXY: "true",
    UPLOAD_RATE_PER_IP: "4",
    UPLOAD_BYTES_PER_IP: "300000",
  });
  const port = await freePort();
  second = fork(entryOf("gateway"), [], { env: { ...process.env, ...sys.env, PORT: String(port) }, stdio: "inherit" });
  await new Promise<void>((resolve, reject) => {
    second.once("message", () => resolve());
    second.once("exit", (code) => reject(new Error(`second gateway exited with ${code}`)));
  });
  secondUrl = `http://127.0.0.1:${port}`;
});
after(async () => {
  second?.kill("SIGTERM");
  await sys?.stop();
});

/** A client address of its own (IPv6 documentation range), so runs never share a bucket. */
const freshAddress = () => `2001:db8::${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}`;

describe("rate limits", () => {
  it("holds one per-key limit across two gateways sharing Redis", async () => {
    const ada = await createUserWithKey(sys, `ada-${randomBytes(3).toString("hex")}@example.com`);
    const gateways = [apiClient(sys.url, ada.key), apiClient(secondUrl, ada.key)];
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      // A distinct address per request keeps the per-address limit out of this test.
      const res = await gateways[i % 2]("GET", "/users/me", undefined, { "x-forwarded-for": `198.51.100.${i}` });
      statuses.push(res.status);
      if (res.status === 429) {
        const retryAfter = res.headers.get("retry-after");
        assert.match(retryAfter ?? "", /^\d+$/);
        assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60);
        assert.match(res.body.error, /rate limit/);
      } else {
        assert.equal(res.headers.get("ratelimit-limit"), "20");
      }
    }
    assert.equal(statuses.filter((s) => s === 200).length, 20);
    assert.deepEqual(statuses.slice(20), Array(10).fill(429));
  });

  it("limits each client address, honouring X-Forwarded-For behind TRUST_PROXY", async () => {
    const address = freshAddress();
    const anonymous = apiClient(sys.url);
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) {
      statuses.push((await anonymous("GET", "/users/me", undefined, { "x-forwarded-for": address })).status);
    }
    // Unauthenticated requests count against the address too: 30 answered 401, then 429.
    assert.deepEqual([statuses.filter((s) => s === 401).length, statuses.slice(30)], [30, [429, 429]]);
    const other = await anonymous("GET", "/users/me", undefined, { "x-forwarded-for": freshAddress() });
    assert.equal(other.status, 401);
  });

  it("holds one upload budget per address (files and bytes received) across two gateways sharing Redis", async () => {
    const ada = await createUserWithKey(sys, `ada-${randomBytes(3).toString("hex")}@example.com`);
    const document = { title: "CV", blocks: [{ id: "cv", key: "cv", type: "FILE", question: "CV" }] };
    // From an address of its own: the earlier tests spent loopback's per-address allowance.
    const created = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "CV", document }, { "x-forwarded-for": freshAddress() });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await sys.cli("form:publish", "--id", created.body.id);
    const address = freshAddress();
    const upload = async (gateway: string, bytes: number) => {
      const body = new FormData();
      body.set("file", new Blob([new Uint8Array(bytes)], { type: "application/pdf" }), "cv.pdf");
      const res = await fetch(`${gateway}/f/${created.body.id}/uploads`, { method: "POST", headers: { "x-forwarded-for": address }, body });
      return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as { error?: string } };
    };
    // 300,000 bytes in all: three of 100,000 fit exactly, whichever gateway takes them.
    assert.deepEqual([(await upload(sys.url, 100_000)).status, (await upload(secondUrl, 100_000)).status, (await upload(sys.url, 100_000)).status], [200, 200, 200]);
    const overBytes = await upload(secondUrl, 1_000);
    assert.deepEqual([overBytes.status, overBytes.body.error], [429, "upload limit of 0.3 MiB per address in 10 minutes exceeded"]);
    assert.ok(Number(overBytes.retryAfter) >= 1 && Number(overBytes.retryAfter) <= 600);
    const overFiles = await upload(sys.url, 1_000);
    assert.deepEqual([overFiles.status, overFiles.body.error], [429, "upload limit of 4 files per address in 10 minutes exceeded"]);
  });
});
