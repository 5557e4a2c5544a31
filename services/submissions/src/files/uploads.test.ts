import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultContentType, maxFileNameLength, normalizeContentType, sanitizeFileName } from "./uploads.ts";

describe("sanitizeFileName", () => {
  it("keeps the last path segment only", () => {
    assert.equal(sanitizeFileName("cv.pdf"), "cv.pdf");
    assert.equal(sanitizeFileName("../../etc/passwd"), "passwd");
    assert.equal(sanitizeFileName("C:\\Users\\ada\\My CV.pdf"), "My CV.pdf");
    assert.equal(sanitizeFileName("dir/"), "file");
  });

  it("removes control and bidirectional characters and collapses whitespace", () => {
    assert.equal(sanitizeFileName("a\u0000b\nc\td.txt"), "ab c d.txt");
    assert.equal(sanitizeFileName("invoice\u202Efdp.exe"), "invoicefdp.exe");
    assert.equal(sanitizeFileName("  lots   of   space.txt  "), "lots of space.txt");
  });

  it("names the nameless 'file'", () => {
    for (const raw of ["", "   ", ".", "..", "\u0000"]) assert.equal(sanitizeFileName(raw), "file", JSON.stringify(raw));
  });

  it("cuts long names to 200 characters, keeping a short extension and whole characters", () => {
    const long = sanitizeFileName(`${"a".repeat(300)}.pdf`);
    assert.equal(long.length, maxFileNameLength);
    assert.ok(long.endsWith("a.pdf"));
    const emoji = sanitizeFileName("😀".repeat(150));
    assert.ok(emoji.length <= maxFileNameLength);
    assert.equal(emoji, "😀".repeat(100));
    assert.equal(sanitizeFileName("b".repeat(200)), "b".repeat(200));
  });
});

describe("normalizeContentType", () => {
  it("keeps a well-formed media type, lowercased", () => {
    assert.equal(normalizeContentType("application/pdf"), "application/pdf");
    assert.equal(normalizeContentType("Image/PNG"), "image/png");
    assert.equal(normalizeContentType("text/plain; charset=utf-8"), "text/plain; charset=utf-8");
  });

  it("falls back to application/octet-stream", () => {
    for (const raw of ["", "pdf", "text/html\r\nX-Evil: 1", "a/b/c", `${"x".repeat(300)}/y`]) {
      assert.equal(normalizeContentType(raw), defaultContentType, JSON.stringify(raw));
    }
  });
});
