import assert from "node:assert/strict";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { idempotentRequests } from "../idempotency.ts";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import express from "express";
import { createLogger } from "@formsvc/platform/logger.ts";
import { receiveUpload } from "@formsvc/platform/upload-stream.ts";
import { create } from "@bufbuild/protobuf";
import { FormSchema, FormsService, FormStatus } from "@formsvc/proto/forms/v1/forms_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { errorHandler } from "../http-errors.ts";
import { MemorySlidingWindow } from "../rate-limit/sliding-window.ts";
import { hostedFormRoutes } from "./routes.ts";

// POST /f/:id/uploads of the real hosted router over HTTP, with small budgets; addresses told apart by
// X-Forwarded-For (trust proxy on, as behind TRUST_PROXY).
const stored: Awaited<ReturnType<typeof receiveUpload>>[] = [];
const transport = createRouterTransport((router) => {
  // Uploads check the form's access rules first (a password, a confirmed address): this form has none.
  router.service(FormsService, {
    getPublicForm: (req) => ({ form: create(FormSchema, { id: req.id, name: "Uploads", status: FormStatus.PUBLISHED, version: 1, document: { blocks: [] }, settings: {} }), showBranding: true }),
  });
  router.service(SubmissionsService, {
    createUpload: async (requests) => {
      const req = await receiveUpload(requests);
      stored.push(req);
      return { uploadId: `u${stored.length}`, name: req.name, size: BigInt(req.content.length), contentType: req.contentType };
    },
  });
});

const store = new MemorySlidingWindow();
const app = express();
app.set("trust proxy", true);
app.use(
  "/f",
  hostedFormRoutes({
    logger: createLogger("upload-budget-test", "silent"),
    forms: createClient(FormsService, transport),
    submissions: createClient(SubmissionsService, transport),
    // No request here sends an Idempotency-Key.
    idempotency: idempotentRequests(createClient(IdentityService, createRouterTransport(() => {})), "test-secret"),
    rateLimits: { store, perIp: 10_000, publicWritesPerIp: 10_000, uploadsPerIp: 3, uploadBytesPerIp: 100_000 },
    brandingUrl: "http://localhost:8080/app/signup",
  }),
);
app.use(errorHandler(createLogger("upload-budget-test", "silent")));

let base = "";
let server: ReturnType<express.Express["listen"]>;
before(async () => {
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.close();
  await store.close();
});
beforeEach(() => {
  stored.length = 0;
});

async function upload(address: string, bytes: number) {
  const body = new FormData();
  body.append("file", new Blob([Buffer.alloc(bytes, 7)], { type: "application/octet-stream" }), "data.bin");
  const res = await fetch(`${base}/f/form_1/uploads`, { method: "POST", headers: { "x-forwarded-for": address }, body });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), json: (await res.json()) as Record<string, unknown> };
}

/** The same multipart upload sent chunked: no Content-Length at all, so only the bytes received can count. */
function chunkedUpload(address: string, bytes: number): Promise<number> {
  const boundary = "budget-boundary";
  return new Promise((resolve, reject) => {
    const req = request(`${base}/f/form_1/uploads`, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}`, "x-forwarded-for": address, "transfer-encoding": "chunked" },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    req.write(Buffer.alloc(bytes, 1));
    req.end(`\r\n--${boundary}--\r\n`);
  });
}

describe("upload budget per address", () => {
  it("takes a few files per address, then answers 429 JSON with Retry-After; other addresses are apart", async () => {
    for (let i = 0; i < 3; i++) assert.equal((await upload("203.0.113.1", 10)).status, 200);
    const refused = await upload("203.0.113.1", 10);
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.json, { error: "upload limit of 3 files per address in 10 minutes exceeded" });
    assert.ok(Number(refused.retryAfter) > 0 && Number(refused.retryAfter) <= 600);
    assert.equal((await upload("203.0.113.2", 10)).status, 200);
    assert.equal(stored.length, 4, "the refused file was not stored");
  });

  it("counts the bytes received: a file that no longer fits is refused and not stored", async () => {
    assert.equal((await upload("203.0.113.3", 60_000)).status, 200);
    // Declared ~45 KB with 40 KB left: within the multipart allowance, so it is read, then found too big.
    const tooMuch = await upload("203.0.113.3", 45_000);
    assert.equal(tooMuch.status, 429);
    assert.match(String(tooMuch.json.error), /^upload limit of 0\.1 MiB per address in 10 minutes exceeded$/);
    assert.ok(Number(tooMuch.retryAfter) > 0);
    assert.equal((await upload("203.0.113.3", 40_000)).status, 200, "exactly what is left still fits");
    assert.deepEqual(stored.map((s) => s.content.length), [60_000, 40_000]);
  });

  it("refuses before reading a body whose declared length cannot fit", async () => {
    assert.equal((await upload("203.0.113.4", 90_000)).status, 200);
    // 200 KB declared, only the first KB sent: the answer comes without waiting for the rest.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${base}/f/form_1/uploads`, {
        method: "POST",
        headers: { "content-type": "multipart/form-data; boundary=b", "content-length": "200000", "x-forwarded-for": "203.0.113.4" },
      });
      req.on("response", (res) => {
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on("error", reject);
      req.write(Buffer.alloc(1000, 1));
    });
    assert.equal(status, 429);
    assert.equal(stored.length, 1);
  });

  it("counts chunked uploads (no Content-Length) by what arrived", async () => {
    assert.equal(await chunkedUpload("203.0.113.5", 70_000), 200);
    assert.equal(await chunkedUpload("203.0.113.5", 70_000), 429);
    assert.deepEqual(stored.map((s) => s.content.length), [70_000]);
  });
});
