// What `npm start` shows in its terminal: short lines of the launcher's own log (the JSON of every process
// goes to files under DATA_DIR/logs), or, with LOG_FORMAT=json, every JSON line on stdout as before.
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import type { Config } from "@formsvc/platform/config.ts";
import { createLogger, type Logger } from "@formsvc/platform/logger.ts";

const levelNames: Record<number, string> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

/** One pino JSON line as a short line: time, the level when it is not info, the message, and an error's text. */
export function shortLine(json: string): string {
  let entry: { time?: number; level?: number; msg?: string; error?: unknown; err?: { message?: string } };
  try {
    entry = JSON.parse(json);
  } catch {
    return json.trimEnd();
  }
  const time = new Date(entry.time ?? Date.now()).toTimeString().slice(0, 8);
  const level = entry.level !== undefined && entry.level !== 30 ? ` ${levelNames[entry.level] ?? entry.level}:` : "";
  const error = typeof entry.error === "string" ? `: ${entry.error}` : entry.err?.message ? `: ${entry.err.message}` : "";
  return `${time}${level} ${entry.msg ?? ""}${error}`;
}

/** Where the processes' logs go: a directory under DATA_DIR, or undefined for stdout (LOG_FORMAT=json). */
export function logDirOf(config: Config): string | undefined {
  return config.logFormat === "json" ? undefined : join(config.dataDir, "logs");
}

/** The launcher's logger: JSON into `<logDir>/launcher.log` and short lines on stdout, or JSON on stdout. */
export function launcherLogger(config: Config): Logger {
  const logDir = logDirOf(config);
  if (!logDir) return createLogger("launcher", config.logLevel);
  mkdirSync(logDir, { recursive: true, mode: 0o700 });
  const file = createWriteStream(join(logDir, "launcher.log"), { flags: "a" });
  const terminal = { write: (line: string) => void process.stdout.write(shortLine(line) + "\n") };
  return createLogger("launcher", config.logLevel, pino.multistream([{ stream: file }, { stream: terminal }]));
}
