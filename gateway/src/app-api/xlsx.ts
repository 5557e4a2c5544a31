// XLSX of a form's responses, written as the rows come: a ZIP (deflated entries with data descriptors, so
// no size is needed before an entry's bytes) holding the smallest workbook spreadsheets open, one sheet of
// inline strings and numbers. Each chunk is deflated on its own with a sync flush: concatenated, the
// chunks are one valid deflate stream, and nothing but the current page is held. ZIP32: an entry stays
// under 4 GiB (500,000 responses of a dozen answers make a few hundred MB).
import { crc32, deflateRawSync, constants } from "node:zlib";

/** XML text, escaped; characters XML 1.0 cannot hold (control characters) are dropped. */
function xmlText(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
}

/** The most characters (UTF-16 units) a cell holds in Excel; a longer text is cut, ending in `cutMarker`. */
export const maxCellChars = 32_767;
export const cutMarker = " […cut: longer than a spreadsheet cell holds]";

function cellText(text: string): string {
  return text.length <= maxCellChars ? text : text.slice(0, maxCellChars - cutMarker.length) + cutMarker;
}

/** A row of the sheet. Text is an inline string (never a formula: XLSX cells hold no formula unless marked). */
function sheetRow(cells: (string | number)[]): string {
  const xml = cells.map((cell) =>
    typeof cell === "number" && Number.isFinite(cell)
      ? `<c><v>${cell}</v></c>`
      : `<c t="inlineStr"><is><t xml:space="preserve">${xmlText(cellText(String(cell)))}</t></is></c>`,
  );
  return `<row>${xml.join("")}</row>`;
}

const xmlHead = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const fixedEntries: [string, string][] = [
  [
    "[Content_Types].xml",
    xmlHead +
      '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
      "</Types>",
  ],
  [
    "_rels/.rels",
    xmlHead +
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>' +
      "</Relationships>",
  ],
  [
    "xl/workbook.xml",
    xmlHead +
      '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">' +
      '<sheets><sheet name="Responses" sheetId="1" r:id="rId1"/></sheets></workbook>',
  ],
  [
    "xl/_rels/workbook.xml.rels",
    xmlHead +
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>' +
      "</Relationships>",
  ],
];

async function* sheetXml(pages: AsyncIterable<(string | number)[][]>): AsyncGenerator<string> {
  yield xmlHead + '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>';
  for await (const rows of pages) yield rows.map(sheetRow).join("");
  yield "</sheetData></worksheet>";
}

/** The workbook of `rows` (the export's rows, a page at a time), as ZIP chunks. */
export async function* responsesXlsx(rows: AsyncIterable<(string | number)[][]>): AsyncGenerator<Buffer> {
  const entries: (readonly [string, AsyncIterable<string>])[] = [
    ...fixedEntries.map(([name, xml]) => [name, (async function* () { yield xml; })()] as const),
    ["xl/worksheets/sheet1.xml", sheetXml(rows)] as const,
  ];
  const written: { name: Buffer; crc: number; compressed: number; size: number; offset: number }[] = [];
  let offset = 0;
  for (const [entryName, content] of entries) {
    const name = Buffer.from(entryName, "utf8");
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(0x0808, 6); // sizes in a data descriptor; UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt16LE(name.length, 26);
    yield Buffer.concat([local, name]);
    const entry = { name, crc: 0, compressed: 0, size: 0, offset };
    offset += local.length + name.length;
    for await (const text of content) {
      const bytes = Buffer.from(text, "utf8");
      entry.crc = crc32(bytes, entry.crc);
      entry.size += bytes.length;
      const deflated = deflateRawSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH });
      entry.compressed += deflated.length;
      yield deflated;
    }
    const last = deflateRawSync(Buffer.alloc(0)); // the final (empty) block
    entry.compressed += last.length;
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(entry.crc >>> 0, 4);
    descriptor.writeUInt32LE(entry.compressed, 8);
    descriptor.writeUInt32LE(entry.size, 12);
    yield Buffer.concat([last, descriptor]);
    offset += entry.compressed + descriptor.length;
    written.push(entry);
  }
  const central = written.map((e) => {
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(0x0808, 8);
    header.writeUInt16LE(8, 10);
    header.writeUInt16LE(0x21, 14);
    header.writeUInt32LE(e.crc >>> 0, 16);
    header.writeUInt32LE(e.compressed, 20);
    header.writeUInt32LE(e.size, 24);
    header.writeUInt16LE(e.name.length, 28);
    header.writeUInt32LE(e.offset, 42);
    return Buffer.concat([header, e.name]);
  });
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(written.length, 8);
  end.writeUInt16LE(written.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  yield Buffer.concat([directory, end]);
}
