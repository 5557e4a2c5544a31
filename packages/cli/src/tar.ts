// A small tar (POSIX ustar, with pax headers for long names) writer and reader for the backup file,
// streamed both ways so neither a large database nor many files are held in memory. GNU and BSD tar read
// what it writes (`tar -tzf backup.tar.gz`).
import { once } from "node:events";
import { open } from "node:fs/promises";
import type { Writable } from "node:stream";

const block = 512;
const zeros = Buffer.alloc(block);

export type EntryType = "file" | "directory";

export interface EntryHeader {
  name: string;
  type: EntryType;
  mode: number;
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function header(name: string, type: "0" | "5" | "x", mode: number, size: number, mtime: number): Buffer {
  const buf = Buffer.alloc(block);
  buf.write(name, 0, 100, "utf8");
  buf.write(octal(mode & 0o7777, 8), 100, "ascii");
  buf.write(octal(0, 8), 108, "ascii");
  buf.write(octal(0, 8), 116, "ascii");
  buf.write(octal(size, 12), 124, "ascii");
  buf.write(octal(Math.max(0, Math.floor(mtime)), 12), 136, "ascii");
  buf.write("        ", 148, "ascii");
  buf.write(type, 156, "ascii");
  buf.write("ustar\0", 257, "ascii");
  buf.write("00", 263, "ascii");
  let sum = 0;
  for (const byte of buf) sum += byte;
  buf.write(octal(sum, 7) + " ", 148, "ascii");
  return buf;
}

/** A pax extended header carrying `path` for a name longer than ustar's 100 bytes. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return Buffer.from(`${length}${body}`);
}

export class TarWriter {
  #out: Writable;
  bytes = 0;

  constructor(out: Writable) {
    this.#out = out;
  }

  async #write(chunk: Buffer): Promise<void> {
    this.bytes += chunk.length;
    if (!this.#out.write(chunk)) await once(this.#out, "drain");
  }

  async #header(name: string, type: "0" | "5", mode: number, size: number, mtime: number): Promise<void> {
    if (Buffer.byteLength(name) > 100) {
      const pax = paxRecord("path", name);
      await this.#write(header("././@PaxHeader", "x", 0o644, pax.length, mtime));
      await this.#write(pax);
      await this.#pad(pax.length);
    }
    await this.#write(header(name, type, mode, size, mtime));
  }

  async #pad(size: number): Promise<void> {
    const rest = size % block;
    if (rest) await this.#write(zeros.subarray(0, block - rest));
  }

  async directory(name: string, mode = 0o700, mtime = Date.now() / 1000): Promise<void> {
    await this.#header(name.endsWith("/") ? name : `${name}/`, "5", mode, 0, mtime);
  }

  async buffer(name: string, data: Buffer | string, mode = 0o600, mtime = Date.now() / 1000): Promise<void> {
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    await this.#header(name, "0", mode, bytes.length, mtime);
    await this.#write(bytes);
    await this.#pad(bytes.length);
  }

  /**
   * A file from disk, as long as it was when it was looked at (`size`): a file that grows meanwhile is cut
   * there, one that shrinks is padded with zeros (a live database's files, which its WAL repairs). A file
   * gone meanwhile (a temporary file of the database) is skipped: false.
   */
  async file(name: string, path: string, size: number, mode: number, mtime: number): Promise<boolean> {
    let handle;
    try {
      handle = await open(path, "r");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw err;
    }
    try {
      await this.#header(name, "0", mode, size, mtime);
      const chunk = Buffer.alloc(1024 * 1024);
      let done = 0;
      while (done < size) {
        const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - done), done);
        if (bytesRead === 0) break;
        await this.#write(Buffer.from(chunk.subarray(0, bytesRead)));
        done += bytesRead;
      }
      while (done < size) {
        const n = Math.min(zeros.length, size - done);
        await this.#write(zeros.subarray(0, n));
        done += n;
      }
      await this.#pad(size);
      return true;
    } finally {
      await handle.close();
    }
  }

  /** The two zero blocks that end an archive; the stream is left open for its owner to end. */
  async finish(): Promise<void> {
    await this.#write(Buffer.alloc(2 * block));
  }
}

/** Exactly `n` bytes at a time from a stream of chunks (fewer only at its end). */
class ByteReader {
  #chunks: Buffer[] = [];
  #length = 0;
  #source: AsyncIterator<Buffer>;
  #done = false;

  constructor(source: AsyncIterable<Buffer> | Iterable<Buffer>) {
    this.#source =
      Symbol.asyncIterator in source
        ? (source as AsyncIterable<Buffer>)[Symbol.asyncIterator]()
        : (async function* () {
            yield* source as Iterable<Buffer>;
          })();
  }

  async read(n: number): Promise<Buffer> {
    while (this.#length < n && !this.#done) {
      const next = await this.#source.next();
      if (next.done) this.#done = true;
      else {
        this.#chunks.push(next.value);
        this.#length += next.value.length;
      }
    }
    const all = this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks);
    const out = all.subarray(0, Math.min(n, all.length));
    const rest = all.subarray(out.length);
    this.#chunks = rest.length ? [rest] : [];
    this.#length = rest.length;
    return out;
  }
}

export interface Entry extends EntryHeader {
  /** The entry's bytes, in pieces; what is not read is skipped before the next entry. */
  chunks(): AsyncGenerator<Buffer>;
  buffer(): Promise<Buffer>;
}

function field(buf: Buffer, start: number, length: number): string {
  const raw = buf.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? raw.length : end).toString("utf8");
}

function number(buf: Buffer, start: number, length: number): number {
  const text = field(buf, start, length).trim();
  return text ? parseInt(text, 8) : 0;
}

/** The entries of a tar stream, in order; each entry's body must be read (or is skipped) before the next. */
export async function* readTar(source: AsyncIterable<Buffer> | Iterable<Buffer>): AsyncGenerator<Entry> {
  const reader = new ByteReader(source);
  let longName: string | undefined;
  for (;;) {
    const head = await reader.read(block);
    if (head.length < block) throw new Error("the archive ends in the middle of an entry's header: the backup file is cut short");
    if (head.every((b) => b === 0)) return;
    let sum = 0;
    for (let i = 0; i < block; i++) sum += i >= 148 && i < 156 ? 32 : head[i];
    if (sum !== number(head, 148, 8)) throw new Error("an entry's header has a wrong checksum: this is not a backup file, or it is damaged");
    const size = number(head, 124, 12);
    const typeflag = String.fromCharCode(head[156] || 48);
    const padded = Math.ceil(size / block) * block;
    if (typeflag === "x" || typeflag === "g") {
      const body = (await reader.read(padded)).subarray(0, size).toString("utf8");
      if (typeflag === "x") for (const m of body.matchAll(/\d+ path=([^\n]*)\n/g)) longName = m[1];
      continue;
    }
    const prefix = field(head, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(head, 0, 100)}` : field(head, 0, 100));
    longName = undefined;
    const type: EntryType | undefined = typeflag === "0" ? "file" : typeflag === "5" ? "directory" : undefined;
    if (!type) throw new Error(`the archive holds ${name}, neither a file nor a directory`);
    let left = size;
    const chunks = async function* () {
      while (left > 0) {
        const piece = await reader.read(Math.min(left, 1024 * 1024));
        if (piece.length === 0) throw new Error(`the archive ends in the middle of ${name}: the backup file is cut short`);
        left -= piece.length;
        yield piece;
      }
    };
    const entry: Entry = {
      name: type === "directory" ? name.replace(/\/+$/, "") : name,
      type,
      mode: number(head, 100, 8),
      size,
      mtime: number(head, 136, 12),
      chunks,
      async buffer() {
        const parts: Buffer[] = [];
        for await (const piece of chunks()) parts.push(piece);
        return Buffer.concat(parts);
      },
    };
    yield entry;
    for await (const _ of chunks()); // what the consumer left
    if (padded > size) await reader.read(padded - size);
  }
}
