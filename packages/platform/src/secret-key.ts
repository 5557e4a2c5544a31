import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config.ts";

/** SECRET_KEY, or when none is configured, 32 random bytes made once into DATA_DIR/secret-key. */
export function resolveSecretKey(config: Pick<Config, "secretKey" | "dataDir">): string {
  if (config.secretKey) return config.secretKey;
  const file = join(config.dataDir, "secret-key");
  if (existsSync(file)) {
    const key = readFileSync(file, "utf8").trim();
    if (key) return key;
  }
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32).toString("base64url");
  writeFileSync(file, key + "\n", { mode: 0o600 });
  return key;
}
