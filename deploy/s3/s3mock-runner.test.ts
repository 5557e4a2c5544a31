import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ensureS3MockJar, startS3Mock } from "./s3mock-runner.ts";

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

test("fetches S3Mock into ~/.m2, serves a bucket on 127.0.0.1, and stops", async () => {
  const jar = await ensureS3MockJar();
  assert.match(jar, /\.m2\/repository\/com\/adobe\/testing\/s3mock\/5\.0\.0\/s3mock-5\.0\.0-exec\.jar$/);
  await assert.rejects(ensureS3MockJar("5.0"), /not an S3Mock version/);

  const s3 = await startS3Mock({ bucket: "runner-test" });
  try {
    assert.equal(s3.endpoint, `http://127.0.0.1:${s3.port}`);
    assert.equal(s3.env.S3_BUCKET, "runner-test");
    assert.equal(s3.env.S3_FORCE_PATH_STYLE, "true");
    const put = await fetch(`${s3.endpoint}/runner-test/hello.txt`, { method: "PUT", body: "hello" });
    assert.equal(put.status, 200);
    const get = await fetch(`${s3.endpoint}/runner-test/hello.txt`);
    assert.equal(await get.text(), "hello");
  } finally {
    await s3.stop();
  }
  assert.equal(await portOpen(s3.port), false, "nothing listens once stopped");
  await s3.stop(); // a second stop is a no-op
});

test("a data directory given is kept after stop", async () => {
  const dir = mkdtempSync(join(tmpdir(), "s3mock-runner-test-"));
  try {
    const s3 = await startS3Mock({ dataDir: dir });
    await s3.stop();
    assert.ok(existsSync(join(dir, "s3mock.log")));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
