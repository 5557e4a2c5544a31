// A QR code encoder for the Share tab (ISO/IEC 18004), with no dependency: byte mode (the text's UTF-8),
// error correction level M (15% of the symbol may be lost), versions 1 to 10, so up to 213 bytes: a form's
// link with a few prefilled values. The mask is chosen by the standard's penalty rules.
import { t } from "../i18n/messages.ts";

export interface QrCode {
  /** 1 to 10: the symbol is 17 + 4 × version modules wide. */
  version: number;
  size: number;
  /** The data mask pattern applied, 0 to 7. */
  mask: number;
  /** `modules[y][x]`: true for a dark module. */
  modules: boolean[][];
}

export const maxQrVersion = 10;

// Level M, by version (index 0 unused): error correction codewords of each block, and the number of blocks.
const ecCodewordsPerBlock = [0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26];
const ecBlockCount = [0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5];
// The centre rows and columns of the alignment patterns, by version.
const alignmentCentres = [[], [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50]];
/** The format information's two bits for level M. */
const levelMBits = 0b00;

/** Modules of a version's symbol that carry codewords (everything but the function patterns). */
function dataModules(version: number): number {
  let modules = (16 * version + 128) * version + 64;
  if (version >= 2) {
    const alignments = Math.floor(version / 7) + 2;
    modules -= (25 * alignments - 10) * alignments - 55;
    if (version >= 7) modules -= 36;
  }
  return modules;
}

const totalCodewords = (version: number) => Math.floor(dataModules(version) / 8);
const dataCodewords = (version: number) => totalCodewords(version) - ecCodewordsPerBlock[version] * ecBlockCount[version];
/** Bits of the byte mode's character count. */
const countBits = (version: number) => (version <= 9 ? 8 : 16);
/** The most bytes a version holds at level M. */
export const byteCapacity = (version: number) => Math.floor((dataCodewords(version) * 8 - 4 - countBits(version)) / 8);

// ---- Reed-Solomon over GF(256), the polynomial x^8 + x^4 + x^3 + x^2 + 1 ---------------------------------

function gfMultiply(x: number, y: number): number {
  let z = 0;
  for (let i = 7; i >= 0; i--) {
    z = (z << 1) ^ ((z >>> 7) * 0x11d);
    z ^= ((y >>> i) & 1) * x;
  }
  return z;
}

/** The generator polynomial of `degree` error correction codewords, highest coefficient first (its leading 1 left out). */
function generator(degree: number): number[] {
  const coefficients = new Array<number>(degree).fill(0);
  coefficients[degree - 1] = 1;
  let root = 1;
  for (let i = 0; i < degree; i++) {
    for (let j = 0; j < degree; j++) {
      coefficients[j] = gfMultiply(coefficients[j], root);
      if (j + 1 < degree) coefficients[j] ^= coefficients[j + 1];
    }
    root = gfMultiply(root, 2);
  }
  return coefficients;
}

/** The `degree` error correction codewords of a block of data codewords. */
export function errorCorrection(data: readonly number[], degree: number): number[] {
  const divisor = generator(degree);
  const remainder = new Array<number>(degree).fill(0);
  for (const byte of data) {
    const factor = byte ^ remainder.shift()!;
    remainder.push(0);
    for (let i = 0; i < degree; i++) remainder[i] ^= gfMultiply(divisor[i], factor);
  }
  return remainder;
}

// ---- codewords ---------------------------------------------------------------------------------------

/** The data codewords of `bytes` in byte mode at `version`: mode, count, bytes, terminator and padding. */
export function byteModeCodewords(bytes: Uint8Array, version: number): number[] {
  const bits: number[] = [];
  const put = (value: number, length: number) => {
    for (let i = length - 1; i >= 0; i--) bits.push((value >>> i) & 1);
  };
  put(0b0100, 4);
  put(bytes.length, countBits(version));
  for (const byte of bytes) put(byte, 8);
  const capacityBits = dataCodewords(version) * 8;
  put(0, Math.min(4, capacityBits - bits.length));
  put(0, (8 - (bits.length % 8)) % 8);
  const codewords: number[] = [];
  for (let i = 0; i < bits.length; i += 8) codewords.push(bits.slice(i, i + 8).reduce((byte, bit) => (byte << 1) | bit, 0));
  for (let pad = 0xec; codewords.length < dataCodewords(version); pad ^= 0xec ^ 0x11) codewords.push(pad);
  return codewords;
}

/** The data codewords split into the version's blocks, each followed by its error correction, interleaved. */
export function finalCodewords(data: readonly number[], version: number): number[] {
  const blocks = ecBlockCount[version];
  const ecLength = ecCodewordsPerBlock[version];
  const total = totalCodewords(version);
  const shortBlocks = blocks - (total % blocks);
  const shortLength = Math.floor(total / blocks);
  const dataOf: number[][] = [];
  const ecOf: number[][] = [];
  for (let i = 0, at = 0; i < blocks; i++) {
    const length = shortLength - ecLength + (i < shortBlocks ? 0 : 1);
    const block = data.slice(at, at + length);
    at += length;
    dataOf.push(block);
    ecOf.push(errorCorrection(block, ecLength));
  }
  const out: number[] = [];
  for (let i = 0; i <= shortLength - ecLength; i++) for (const block of dataOf) if (i < block.length) out.push(block[i]);
  for (let i = 0; i < ecLength; i++) for (const ec of ecOf) out.push(ec[i]);
  return out;
}

// ---- the symbol --------------------------------------------------------------------------------------

const bit = (value: number, i: number) => ((value >>> i) & 1) !== 0;

/** The 15 bits of format information for level M and `mask`, as placed (BCH code, then the fixed mask). */
export function formatBits(mask: number): number {
  const data = (levelMBits << 3) | mask;
  let remainder = data;
  for (let i = 0; i < 10; i++) remainder = (remainder << 1) ^ ((remainder >>> 9) * 0x537);
  return ((data << 10) | remainder) ^ 0x5412;
}

/** The 18 bits of version information (versions 7 and up). */
export function versionBits(version: number): number {
  let remainder = version;
  for (let i = 0; i < 12; i++) remainder = (remainder << 1) ^ ((remainder >>> 11) * 0x1f25);
  return (version << 12) | remainder;
}

const masks: ((x: number, y: number) => boolean)[] = [
  (x, y) => (x + y) % 2 === 0,
  (_x, y) => y % 2 === 0,
  (x) => x % 3 === 0,
  (x, y) => (x + y) % 3 === 0,
  (x, y) => (Math.floor(x / 3) + Math.floor(y / 2)) % 2 === 0,
  (x, y) => ((x * y) % 2) + ((x * y) % 3) === 0,
  (x, y) => (((x * y) % 2) + ((x * y) % 3)) % 2 === 0,
  (x, y) => (((x + y) % 2) + ((x * y) % 3)) % 2 === 0,
];

class QrSymbol {
  readonly version: number;
  readonly size: number;
  readonly modules: boolean[][];
  /** Modules of the function patterns (finders, timing, alignment, format and version), never masked. */
  readonly reserved: boolean[][];

  constructor(version: number) {
    this.version = version;
    this.size = 17 + 4 * version;
    this.modules = Array.from({ length: this.size }, () => new Array<boolean>(this.size).fill(false));
    this.reserved = Array.from({ length: this.size }, () => new Array<boolean>(this.size).fill(false));
    this.drawFunctionPatterns();
  }

  private set(x: number, y: number, dark: boolean): void {
    this.modules[y][x] = dark;
    this.reserved[y][x] = true;
  }

  private drawFunctionPatterns(): void {
    const { size } = this;
    for (let i = 0; i < size; i++) {
      this.set(6, i, i % 2 === 0);
      this.set(i, 6, i % 2 === 0);
    }
    // Finders with their separators, in three corners.
    for (const [cx, cy] of [[3, 3], [size - 4, 3], [3, size - 4]]) {
      for (let dy = -4; dy <= 4; dy++) {
        for (let dx = -4; dx <= 4; dx++) {
          const x = cx + dx;
          const y = cy + dy;
          const ring = Math.max(Math.abs(dx), Math.abs(dy));
          if (x >= 0 && x < size && y >= 0 && y < size) this.set(x, y, ring !== 2 && ring !== 4);
        }
      }
    }
    const centres = alignmentCentres[this.version];
    for (let i = 0; i < centres.length; i++) {
      for (let j = 0; j < centres.length; j++) {
        const onFinder = (i === 0 && j === 0) || (i === 0 && j === centres.length - 1) || (i === centres.length - 1 && j === 0);
        if (onFinder) continue;
        for (let dy = -2; dy <= 2; dy++) {
          for (let dx = -2; dx <= 2; dx++) this.set(centres[i] + dx, centres[j] + dy, Math.max(Math.abs(dx), Math.abs(dy)) !== 1);
        }
      }
    }
    this.drawFormat(0); // reserves the format areas; drawn again with the chosen mask
    if (this.version >= 7) {
      const bits = versionBits(this.version);
      for (let i = 0; i < 18; i++) {
        const a = size - 11 + (i % 3);
        const b = Math.floor(i / 3);
        this.set(a, b, bit(bits, i));
        this.set(b, a, bit(bits, i));
      }
    }
  }

  drawFormat(mask: number): void {
    const { size } = this;
    const bits = formatBits(mask);
    // Around the top left finder: bits 0–7 down column 8 (skipping the timing row), 8–14 leftwards along row 8.
    for (let i = 0; i <= 5; i++) this.set(8, i, bit(bits, i));
    this.set(8, 7, bit(bits, 6));
    this.set(8, 8, bit(bits, 7));
    this.set(7, 8, bit(bits, 8));
    for (let i = 9; i < 15; i++) this.set(14 - i, 8, bit(bits, i));
    // The copy: bits 0–7 along row 8 from the right edge, 8–14 down column 8 at the bottom.
    for (let i = 0; i < 8; i++) this.set(size - 1 - i, 8, bit(bits, i));
    for (let i = 8; i < 15; i++) this.set(8, size - 15 + i, bit(bits, i));
    this.set(8, size - 8, true); // the dark module
  }

  /** Places the codewords in the two-module-wide columns, upwards and downwards in turn from the bottom right. */
  drawCodewords(codewords: readonly number[]): void {
    const { size } = this;
    let i = 0;
    for (let right = size - 1; right >= 1; right -= 2) {
      if (right === 6) right = 5; // the vertical timing pattern
      const upward = ((right + 1) & 2) === 0;
      for (let step = 0; step < size; step++) {
        const y = upward ? size - 1 - step : step;
        for (let dx = 0; dx < 2; dx++) {
          const x = right - dx;
          if (this.reserved[y][x]) continue;
          // Remainder bits past the last codeword stay light.
          this.modules[y][x] = i < codewords.length * 8 && bit(codewords[i >>> 3], 7 - (i & 7));
          i++;
        }
      }
    }
  }

  applyMask(mask: number): void {
    const test = masks[mask];
    for (let y = 0; y < this.size; y++) {
      for (let x = 0; x < this.size; x++) if (!this.reserved[y][x] && test(x, y)) this.modules[y][x] = !this.modules[y][x];
    }
  }
}

/** The standard's penalty of a symbol (rules N1 to N4); the mask giving the lowest is used. */
export function penalty(modules: readonly (readonly boolean[])[]): number {
  const size = modules.length;
  let score = 0;
  const finderLike = [
    [true, false, true, true, true, false, true, false, false, false, false],
    [false, false, false, false, true, false, true, true, true, false, true],
  ];
  for (let pass = 0; pass < 2; pass++) {
    const at = (line: number, i: number) => (pass === 0 ? modules[line][i] : modules[i][line]);
    for (let line = 0; line < size; line++) {
      // N1: runs of five or more modules of one colour in a row or column.
      let run = 1;
      for (let i = 1; i <= size; i++) {
        if (i < size && at(line, i) === at(line, i - 1)) {
          run++;
          continue;
        }
        if (run >= 5) score += 3 + (run - 5);
        run = 1;
      }
      // N3: 1:1:3:1:1 finder-like patterns with four light modules on one side.
      for (let i = 0; i + 11 <= size; i++) {
        for (const pattern of finderLike) if (pattern.every((dark, k) => at(line, i + k) === dark)) score += 40;
      }
    }
  }
  // N2: 2×2 blocks of one colour.
  for (let y = 0; y + 1 < size; y++) {
    for (let x = 0; x + 1 < size; x++) {
      const c = modules[y][x];
      if (modules[y][x + 1] === c && modules[y + 1][x] === c && modules[y + 1][x + 1] === c) score += 3;
    }
  }
  // N4: how far the share of dark modules is from half, in steps of 5%.
  const dark = modules.reduce((sum, row) => sum + row.filter(Boolean).length, 0);
  const total = size * size;
  score += (Math.ceil(Math.abs(dark * 20 - total * 10) / total) - 1) * 10;
  return score;
}

export class QrTooLongError extends Error {
  readonly bytes: number;
  constructor(bytes: number) {
    super(t("share.qrTooLarge", { bytes, max: byteCapacity(maxQrVersion) }));
    this.bytes = bytes;
  }
}

/**
 * The QR code of `text`: the smallest version that holds it, and the mask with the lowest penalty
 * unless one is given (tests compare a fixed version and mask with other encoders).
 */
export function encodeQr(text: string, options: { version?: number; mask?: number } = {}): QrCode {
  const bytes = new TextEncoder().encode(text);
  let version = options.version ?? 1;
  while (version <= maxQrVersion && byteCapacity(version) < bytes.length) {
    if (options.version !== undefined) throw new QrTooLongError(bytes.length);
    version++;
  }
  if (version > maxQrVersion) throw new QrTooLongError(bytes.length);
  const codewords = finalCodewords(byteModeCodewords(bytes, version), version);
  const candidates = options.mask === undefined ? masks.map((_, i) => i) : [options.mask];
  let best: QrCode | undefined;
  let bestPenalty = Infinity;
  for (const mask of candidates) {
    const symbol = new QrSymbol(version);
    symbol.drawCodewords(codewords);
    symbol.applyMask(mask);
    symbol.drawFormat(mask);
    const score = candidates.length === 1 ? 0 : penalty(symbol.modules);
    if (score < bestPenalty) {
      bestPenalty = score;
      best = { version, size: symbol.size, mask, modules: symbol.modules };
    }
  }
  return best!;
}

/** The standard's quiet zone: four light modules around the symbol. */
export const quietZone = 4;

/** The code as an SVG image, one module a unit (with the quiet zone), `pixels` wide. */
export function qrSvg(code: QrCode, pixels = 256): string {
  const span = code.size + 2 * quietZone;
  let path = "";
  code.modules.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (dark) path += `M${x + quietZone} ${y + quietZone}h1v1h-1z`;
    }),
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${span} ${span}" width="${pixels}" height="${pixels}" shape-rendering="crispEdges"><rect width="${span}" height="${span}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`;
}
