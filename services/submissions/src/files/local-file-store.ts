import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { assertStorageKey, type FileStore } from "./file-store.ts";

/** The default directory of stored files: `<DATA_DIR>/files`. */
export function defaultFilesDir(dataDir: string): string {
  return join(dataDir, "files");
}

/**
 * Files in a local directory, one file per key (`<dir>/<key>`). A put writes a temporary file, flushes
 * it to disk and renames it into place, so a reader never sees a half-written file.
 */
export function createLocalFileStore(dir: string): FileStore {
  let ready: Promise<unknown> | undefined;
  const ensureDir = () => (ready ??= mkdir(dir, { recursive: true }).catch((err: unknown) => {
    ready = undefined;
    throw err;
  }));
  const pathOf = (key: string) => {
    assertStorageKey(key);
    return join(dir, key);
  };

  return {
    async put(key, content) {
      const path = pathOf(key);
      await ensureDir();
      // A dot-prefixed name can never be a key, so a leftover temporary file is never served.
      const temporary = join(dir, `.${key}.${randomBytes(6).toString("hex")}.tmp`);
      const handle = await open(temporary, "wx", 0o600);
      try {
        if (content instanceof Uint8Array) await handle.writeFile(content);
        else for await (const chunk of content) await handle.write(chunk);
        await handle.sync();
      } catch (err) {
        await handle.close().catch(() => {});
        await rm(temporary, { force: true });
        throw err;
      }
      await handle.close();
      try {
        await rename(temporary, path);
      } catch (err) {
        await rm(temporary, { force: true });
        throw err;
      }
    },

    async get(key) {
      try {
        return new Uint8Array(await readFile(pathOf(key)));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
    },

    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}
