import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config.ts";

/**
 * SECRET_KEY, or when none is configured, 32 random bytes made once into DATA_DIR/secret-key. Processes
 * starting together (the gateway and delivery sign file links with it) agree on one key: the file is
 * written beside and linked into place, which fails for all but the first.
 */
export function resolveSecretKey(config: Pick<Config, "secretKey" | "dataDir">): string {
  if (config.secretKey) return config.secretKey;
  const file = join(config.dataDir, "secret-key");
  const existing = readKey(file);
  if (existing) return existing;
  mkdirSync(config.dataDir, { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(draft, randomBytes(32).toString("base64url") + "\n", { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    rmSync(draft, { force: true });
  }
  const key = readKey(file);
  if (!key) throw new Error(`${file} is empty: remove it, or set SECRET_KEY`);
  return key;
}

function readKey(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8").trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
