import { describe, expect, it } from "vitest";
import { byteCapacity, byteModeCodewords, encodeQr, errorCorrection, finalCodewords, formatBits, maxQrVersion, penalty, qrSvg, QrTooLongError, versionBits } from "./qr.ts";

const hex = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, "0")).join(" ");
const rows = (modules: boolean[][]) => modules.map((row) => row.map((dark) => (dark ? "#" : ".")).join(""));

describe("QR code encoder", () => {
  it("computes Reed-Solomon error correction as the standard's worked examples", () => {
    // ISO/IEC 18004 Annex I: "01234567" in numeric mode, version 1-M: its 16 data codewords and 10 EC codewords.
    const numeric = [0x10, 0x20, 0x0c, 0x56, 0x61, 0x80, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11];
    expect(hex(errorCorrection(numeric, 10))).toBe("a5 24 d4 c1 ed 36 c7 87 2c 55");
    // "HELLO WORLD" in alphanumeric mode, version 1-M (the common tutorial's example).
    const alphanumeric = [0x20, 0x5b, 0x0b, 0x78, 0xd1, 0x72, 0xdc, 0x4d, 0x43, 0x40, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11];
    expect(hex(errorCorrection(alphanumeric, 10))).toBe("c4 23 27 77 eb d7 e7 e2 5d 17");
  });

  it("encodes byte mode: mode 0100, an 8-bit count, the bytes, a terminator and pad codewords EC 11", () => {
    expect(hex(byteModeCodewords(new TextEncoder().encode("ab"), 1))).toBe("40 26 16 20 ec 11 ec 11 ec 11 ec 11 ec 11 ec 11");
    // Version 10 counts in 16 bits.
    expect(hex(byteModeCodewords(new TextEncoder().encode("a"), 10).slice(0, 4))).toBe("40 00 16 10");
  });

  it("holds 14 to 213 bytes at level M in versions 1 to 10, and refuses more", () => {
    expect([1, 2, 5, 7, 9, 10].map(byteCapacity)).toEqual([14, 26, 84, 122, 180, 213]);
    expect(encodeQr("x".repeat(14)).version).toBe(1);
    expect(encodeQr("x".repeat(15)).version).toBe(2);
    expect(encodeQr("x".repeat(213)).version).toBe(maxQrVersion);
    expect(() => encodeQr("x".repeat(214))).toThrow(QrTooLongError);
    expect(encodeQr("é".repeat(7)).version, "UTF-8: two bytes a letter").toBe(1);
    expect(encodeQr("é".repeat(8)).version).toBe(2);
  });

  it("interleaves the blocks of versions with several", () => {
    // Version 5-M: two blocks of 43 data codewords, 24 EC codewords each.
    const data = Array.from({ length: 86 }, (_, i) => i);
    const out = finalCodewords(data, 5);
    expect(out.length).toBe(134);
    expect(out.slice(0, 6)).toEqual([0, 43, 1, 44, 2, 45]);
    expect(out.slice(86, 88)).toEqual([errorCorrection(data.slice(0, 43), 24)[0], errorCorrection(data.slice(43), 24)[0]]);
  });

  it("makes the same symbol as libqrencode 4.1.1 (qrencode -l M -8) for a link", () => {
    const code = encodeQr("https://example.com/f/abc");
    expect([code.version, code.size, code.mask]).toEqual([2, 25, 2]);
    expect(rows(code.modules)).toEqual([
      "#######....#.#..#.#######",
      "#.....#...#..####.#.....#",
      "#.###.#.#.#.#.#...#.###.#",
      "#.###.#.##.#####..#.###.#",
      "#.###.#.#....#..#.#.###.#",
      "#.....#.##..#.##..#.....#",
      "#######.#.#.#.#.#.#######",
      "........###.#.#.#........",
      "#.#####....###....#####..",
      "#.#....#..##.#...#.#...#.",
      "......#...#.#####..#.#.##",
      "#..##..#.#.##.###.##....#",
      "....#.#.########.##.#.###",
      "##.#.#...#......#..#.#.#.",
      "#....####.######..####.##",
      "#.###..#.###...######...#",
      "#.#..##...####..#####.#..",
      "........##..##.##...##...",
      "#######......##.#.#.#.###",
      "#.....#.#.###.#.#...##.##",
      "#.###.#.#...#########.#..",
      "#.###.#.#..#...#.##.#####",
      "#.###.#.##..#..#.....##.#",
      "#.....#..####.#.##.###..#",
      "#######.###.###..########",
    ]);
  });

  it("draws the function patterns: finders, timing, the dark module, format and version information", () => {
    const code = encodeQr("w".repeat(122)); // version 7: the first with version information
    const { size, modules } = code;
    expect([code.version, size]).toEqual([7, 45]);
    const finder = ["#######", "#.....#", "#.###.#", "#.###.#", "#.###.#", "#.....#", "#######"];
    const square = (x: number, y: number) => finder.map((_, dy) => rows(modules)[y + dy].slice(x, x + 7));
    expect(square(0, 0)).toEqual(finder);
    expect(square(size - 7, 0)).toEqual(finder);
    expect(square(0, size - 7)).toEqual(finder);
    for (let i = 8; i < size - 8; i++) {
      expect(modules[6][i]).toBe(i % 2 === 0);
      expect(modules[i][6]).toBe(i % 2 === 0);
    }
    expect(modules[size - 8][8], "the dark module").toBe(true);
    // Format information, read back from both copies: level M (00) and the mask.
    const bits = formatBits(code.mask);
    const first = [0, 1, 2, 3, 4, 5, 7, 8].map((y) => modules[y][8]).concat([7, 5, 4, 3, 2, 1, 0].map((x) => modules[8][x]));
    const second = Array.from({ length: 8 }, (_, i) => modules[8][size - 1 - i]).concat(Array.from({ length: 7 }, (_, i) => modules[size - 7 + i][8]));
    const expected = Array.from({ length: 15 }, (_, i) => ((bits >>> i) & 1) === 1);
    expect(first).toEqual(expected);
    expect(second).toEqual(expected);
    expect(((bits ^ 0x5412) >>> 10) >> 3, "level M").toBe(0);
    // Version information: 000111 110010 010100 for version 7 (the standard's table), in both corners.
    expect(versionBits(7).toString(2).padStart(18, "0")).toBe("000111110010010100");
    for (let i = 0; i < 18; i++) {
      const set = ((versionBits(7) >>> i) & 1) === 1;
      expect(modules[Math.floor(i / 3)][size - 11 + (i % 3)]).toBe(set);
      expect(modules[size - 11 + (i % 3)][Math.floor(i / 3)]).toBe(set);
    }
  });

  it("chooses the mask with the lowest penalty", () => {
    const text = "https://forms.example.com/f/Xy12Ab34Cd56Ef78?utm_source=newsletter";
    const chosen = encodeQr(text);
    const penalties = Array.from({ length: 8 }, (_, mask) => penalty(encodeQr(text, { mask }).modules));
    expect(penalties[chosen.mask]).toBe(Math.min(...penalties));
  });

  it("writes an SVG of one unit a module, with the four-module quiet zone", () => {
    const code = encodeQr("https://example.com/f/abc");
    const svg = qrSvg(code, 200);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 33 33" width="200" height="200"/);
    const darkCount = code.modules.flat().filter(Boolean).length;
    expect(svg.match(/h1v1h-1z/g)?.length).toBe(darkCount);
    expect(svg).toContain("M4 4h1v1h-1z"); // the top left finder's corner, inside the quiet zone
  });
});
