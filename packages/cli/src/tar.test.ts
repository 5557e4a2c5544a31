import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { readTar, TarWriter } from "./tar.ts";

async function archive(write: (tar: TarWriter) => Promise<void>): Promise<Buffer> {
  const out = new PassThrough();
  const parts: Buffer[] = [];
  out.on("data", (chunk) => parts.push(chunk));
  const tar = new TarWriter(out);
  await write(tar);
  await tar.finish();
  out.end();
  return Buffer.concat(parts);
}

describe("tar", () => {
  const dir = mkdtempSync(join(tmpdir(), "tar-"));
  const long = `files/${"n".repeat(150)}`;
  const big = Buffer.alloc(3 * 1024 * 1024 + 7, 1);
  writeFileSync(join(dir, "big"), big);

  it("reads back what it wrote: directories, small and large files, names past 100 bytes", async () => {
    const bytes = await archive(async (tar) => {
      await tar.buffer("manifest.json", "{}\n", 0o644);
      await tar.directory("files", 0o755);
      await tar.buffer(long, "long name");
      assert.equal(await tar.file("files/big", join(dir, "big"), big.length, 0o600, 1), true);
      assert.equal(await tar.file("files/gone", join(dir, "gone"), 5, 0o600, 1), false, "a file gone meanwhile is skipped");
    });
    assert.equal(bytes.length % 512, 0);
    const seen: [string, string, number, string][] = [];
    for await (const entry of readTar([bytes.subarray(0, 1000), bytes.subarray(1000)])) {
      const body = entry.type === "file" ? await entry.buffer() : Buffer.alloc(0);
      seen.push([entry.name, entry.type, entry.mode, entry.name === "files/big" ? String(body.equals(big)) : body.toString()]);
    }
    assert.deepEqual(seen, [
      ["manifest.json", "file", 0o644, "{}\n"],
      ["files", "directory", 0o755, ""],
      [long, "file", 0o600, "long name"],
      ["files/big", "file", 0o600, "true"],
    ]);
  });

  it("pads a file that shrank to the size it was looked at with, and cuts one that grew", async () => {
    writeFileSync(join(dir, "small"), "abc");
    const bytes = await archive(async (tar) => {
      await tar.file("shrunk", join(dir, "small"), 5, 0o600, 1);
      await tar.file("grown", join(dir, "small"), 2, 0o600, 1);
    });
    const bodies: Buffer[] = [];
    for await (const entry of readTar([bytes])) bodies.push(await entry.buffer());
    assert.deepEqual(bodies, [Buffer.from("abc\0\0"), Buffer.from("ab")]);
  });

  it("is read by tar(1), and reads what tar(1) writes", async () => {
    const bytes = await archive(async (tar) => {
      await tar.directory("files", 0o755);
      await tar.buffer(long, "long name");
    });
    writeFileSync(join(dir, "ours.tar"), bytes);
    assert.deepEqual(execFileSync("tar", ["-tf", join(dir, "ours.tar")], { encoding: "utf8" }).trim().split("\n"), ["files/", long]);
    execFileSync("tar", ["-xf", join(dir, "ours.tar"), "-C", dir]);
    assert.equal(readFileSync(join(dir, long), "utf8"), "long name");
    execFileSync("tar", ["--format=pax", "-cf", join(dir, "theirs.tar"), "-C", dir, long, "big"]);
    const names: string[] = [];
    for await (const entry of readTar([readFileSync(join(dir, "theirs.tar"))])) {
      names.push(entry.name);
      if (entry.name === "big") assert.ok((await entry.buffer()).equals(big));
    }
    assert.deepEqual(names, [long, "big"]);
  });

  it("refuses what is not a tar, and one cut short", async () => {
    await assert.rejects(async () => {
      for await (const _ of readTar([Buffer.alloc(512, 7)]));
    }, /checksum/);
    const bytes = await archive((tar) => tar.buffer("a", "x".repeat(2000)));
    await assert.rejects(async () => {
      for await (const entry of readTar([bytes.subarray(0, 1024)])) await entry.buffer();
    }, /cut short/);
  });
});
