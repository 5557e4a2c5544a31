import { resolve } from "node:path";

/** Runtime configuration, read once from the environment. An empty value means the default. */
export interface Config {
  port: number;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  kafkaBrokers: string[];
  redisUrl: string | undefined;
  rateLimitPerKey: number;
  rateLimitPerIp: number;
  webhookRetrySchedule: number[];
  webhookAllowPrivateUrls: boolean;
  countryHeader: string;
  secretKey: string | undefined;
  /** Express "trust proxy" setting; false unless TRUST_PROXY is set. */
  trustProxy: boolean | number | string;
  logLevel: string;
  /** Interface the RPC services listen on: 127.0.0.1 on one machine, 0.0.0.0 in a cluster. */
  listenHost: string;
  /** Addresses of the internal RPC services. */
  services: Record<ServiceName, string>;
}

export const serviceNames = ["identity", "forms", "submissions", "webhooks", "delivery"] as const;
export type ServiceName = (typeof serviceNames)[number];

/** Default RPC ports of the services, beside the gateway's 8080. */
export const defaultServicePorts: Record<ServiceName, number> = {
  identity: 8081,
  forms: 8082,
  submissions: 8083,
  webhooks: 8084,
  delivery: 8085,
};

/** Seconds between attempts after the first one: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const defaultWebhookRetrySchedule = [5, 300, 1800, 7200, 18000, 36000, 36000];

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

function value(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === "" ? undefined : raw;
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = value(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function retrySchedule(env: Env): number[] {
  const raw = value(env, "WEBHOOK_RETRY_SCHEDULE");
  if (raw === undefined) return defaultWebhookRetrySchedule;
  const seconds = raw.split(",").map((s) => Number(s.trim()));
  if (seconds.some((s) => !Number.isFinite(s) || s < 0)) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, got "${raw}"`);
  }
  return seconds;
}

function trustProxy(env: Env): boolean | number | string {
  const raw = value(env, "TRUST_PROXY");
  if (raw === undefined || raw === "false" || raw === "0") return false;
  if (raw === "true") return true;
  const hops = Number(raw);
  return Number.isInteger(hops) && hops > 0 ? hops : raw;
}

export function loadConfig(env: Env = process.env): Config {
  const port = positiveInt(env, "PORT", 8080);
  const services = Object.fromEntries(
    serviceNames.map((name) => [
      name,
      value(env, `${name.toUpperCase()}_URL`) ?? `http://127.0.0.1:${defaultServicePorts[name]}`,
    ]),
  ) as Record<ServiceName, string>;
  return {
    port,
    publicUrl: (value(env, "PUBLIC_URL") ?? `http://localhost:${port}`).replace(/\/+$/, ""),
    dataDir: resolve(value(env, "DATA_DIR") ?? "./.data"),
    databaseUrl: value(env, "DATABASE_URL"),
    kafkaBrokers: (value(env, "KAFKA_BROKERS") ?? "").split(",").map((b) => b.trim()).filter(Boolean),
    redisUrl: value(env, "REDIS_URL"),
    rateLimitPerKey: positiveInt(env, "RATE_LIMIT_PER_KEY", 100),
    rateLimitPerIp: positiveInt(env, "RATE_LIMIT_PER_IP", 300),
    webhookRetrySchedule: retrySchedule(env),
    webhookAllowPrivateUrls: bool(env, "WEBHOOK_ALLOW_PRIVATE_URLS", false),
    countryHeader: (value(env, "COUNTRY_HEADER") ?? "cf-ipcountry").toLowerCase(),
    secretKey: value(env, "SECRET_KEY"),
    trustProxy: trustProxy(env),
    logLevel: value(env, "LOG_LEVEL") ?? "info",
    listenHost: value(env, "LISTEN_HOST") ?? "127.0.0.1",
    services,
  };
}

/** The port a service listens on: the port of its configured address. */
export function servicePort(config: Config, name: ServiceName): number {
  return Number(new URL(config.services[name]).port) || defaultServicePorts[name];
}

/**
 * Where a service serves /metrics over HTTP/1.1: `<NAME>_METRICS_PORT`, else its RPC port + 1000
 * (identity 9081, forms 9082, ...).
 */
export function metricsPortOf(config: Config, name: ServiceName, env: Env = process.env): number {
  const raw = value(env, `${name.toUpperCase()}_METRICS_PORT`);
  return raw ? Number(raw) : servicePort(config, name) + 1000;
}
