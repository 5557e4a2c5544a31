import { pino, type DestinationStream, type Logger } from "pino";
import { traceIds } from "./tracing.ts";

export type { Logger };

/**
 * Structured logs. Keys, secrets, tokens and bodies are redacted wherever they appear
 * under the usual names, so a careless log line cannot leak them. JSON lines on stdout unless
 * `destination` says otherwise.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL || "info", destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name: service,
    level,
    base: { service },
    // Each line written inside a traced request carries its trace and span ids.
    mixin: () => traceIds() ?? {},
    redact: {
      paths: [
        "key",
        "*.key",
        "secret",
        "*.secret",
        "token",
        "*.token",
        "password",
        "*.password",
        "body",
        "*.body",
        "authorization",
        "*.authorization",
        "headers.authorization",
        "req.headers.authorization",
        "req.headers.cookie",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
