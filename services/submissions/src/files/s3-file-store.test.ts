import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { loadConfig, type S3Settings } from "@formsvc/platform/config.ts";
import { startS3Mock, type S3Mock } from "../../../../deploy/s3/s3mock-runner.ts";
import { describeFileStore } from "../testing/file-store-contract.ts";
import { createS3FileStore, s3Client } from "./s3-file-store.ts";

let s3: S3Mock;
let settings: S3Settings;
before(async () => {
  s3 = await startS3Mock();
  settings = loadConfig(s3.env).s3!;
});
after(() => s3?.stop());

// Each store of the contract gets its own key prefix in the one bucket, as if it had a bucket alone.
describeFileStore("S3 (S3Mock)", () => createS3FileStore({ ...settings, prefix: `${randomBytes(6).toString("hex")}/` }));

describe("S3 file store", () => {
  it("reads S3_* settings, the bucket and path style included", () => {
    assert.equal(settings.endpoint, s3.endpoint);
    assert.equal(settings.bucket, s3.bucket);
    assert.equal(settings.forcePathStyle, true);
    assert.equal(loadConfig({}).s3, undefined, "no S3_BUCKET: the local directory");
    assert.throws(() => loadConfig({ S3_ENDPOINT: s3.endpoint }), /S3_BUCKET/);
    assert.throws(() => loadConfig({ S3_BUCKET: "b", S3_ACCESS_KEY_ID: "k" }), /go together/);
  });

  it("keeps the content type and an attachment disposition on the object", async () => {
    const store = createS3FileStore(settings);
    await store.put("typed", new TextEncoder().encode("%PDF-1.7"), { name: "Ré sumé.pdf", contentType: "application/pdf" });
    const head = await s3Client(settings).send(new HeadObjectCommand({ Bucket: settings.bucket, Key: "typed" }));
    assert.equal(head.ContentType, "application/pdf");
    assert.equal(head.ContentDisposition, "attachment; filename*=UTF-8''R%C3%A9%20sum%C3%A9.pdf");
    await store.delete("typed");
  });

  it("presigns a GET that downloads the file as an attachment until it is deleted", async () => {
    const store = createS3FileStore(settings);
    const content = randomBytes(10_000);
    await store.put("presigned", content, { name: "photo.png", contentType: "image/png" });
    const url = await store.downloadUrl!("presigned", { name: "photo.png", contentType: "image/png" }, 300);
    const parsed = new URL(url);
    assert.equal(parsed.origin, s3.endpoint);
    assert.equal(parsed.searchParams.get("X-Amz-Expires"), "300");
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("content-disposition"), "attachment; filename*=UTF-8''photo.png");
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), content);

    await store.delete("presigned");
    assert.equal((await fetch(url)).status, 404);
  });

});
