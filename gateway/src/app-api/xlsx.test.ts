import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { crc32, inflateRawSync } from "node:zlib";
import { cutMarker, maxCellChars, responsesXlsx } from "./xlsx.ts";

/** The entries of a ZIP, by name, read through its central directory. */
function unzip(zip: Buffer): Map<string, string> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50);
    const [crc, compressed, size, nameLength, offset] = [zip.readUInt32LE(at + 16), zip.readUInt32LE(at + 20), zip.readUInt32LE(at + 24), zip.readUInt16LE(at + 28), zip.readUInt32LE(at + 42)];
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString("utf8");
    const data = offset + 30 + zip.readUInt16LE(offset + 26);
    const content = inflateRawSync(zip.subarray(data, data + compressed));
    assert.equal(content.length, size, name);
    assert.equal(crc32(content), crc, name);
    entries.set(name, content.toString("utf8"));
    at += 46 + nameLength;
  }
  return entries;
}

async function* pagesOf(...pages: (string | number)[][][]) {
  yield* pages;
}

async function bytes(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const all: Buffer[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return Buffer.concat(all);
}

describe("XLSX of responses", () => {
  it("is a workbook whose sheet holds every page's rows: numbers as numbers, text as inline strings, escaped", async () => {
    const zip = await bytes(responsesXlsx(pagesOf([["Response ID", "Age", "Note"]], [["r2", 36, "=1+2 <b>&"]], [["r1", -3.5, "two\nlines\u0007"]])));
    const entries = unzip(zip);
    assert.deepEqual([...entries.keys()], ["[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/_rels/workbook.xml.rels", "xl/worksheets/sheet1.xml"]);
    const sheet = entries.get("xl/worksheets/sheet1.xml")!;
    const rows = [...sheet.matchAll(/<row>(.*?)<\/row>/gs)].map((m) => m[1]);
    assert.equal(rows.length, 3);
    assert.equal(rows[1], '<c t="inlineStr"><is><t xml:space="preserve">r2</t></is></c><c><v>36</v></c><c t="inlineStr"><is><t xml:space="preserve">=1+2 &lt;b&gt;&amp;</t></is></c>');
    assert.match(rows[2], /<c><v>-3.5<\/v><\/c>/);
    assert.match(rows[2], /two\nlines<\/t>/, "a control character XML cannot hold is dropped");
  });

  it("cuts a text longer than a cell holds (32,767 characters) and says so at its end", async () => {
    const long = "a".repeat(maxCellChars + 10);
    const exact = "b".repeat(maxCellChars);
    const sheet = unzip(await bytes(responsesXlsx(pagesOf([[long, exact]])))).get("xl/worksheets/sheet1.xml")!;
    const texts = [...sheet.matchAll(/<t xml:space="preserve">(.*?)<\/t>/gs)].map((m) => m[1]);
    assert.equal(texts[0].length, maxCellChars);
    assert.ok(texts[0].endsWith(cutMarker));
    assert.equal(texts[1], exact, "a text that fits is written whole");
  });
});
