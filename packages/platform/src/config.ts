import { resolve } from "node:path";
import { parseAllowedCidrs, type AllowedRanges } from "./blocked-addresses.ts";
import { productName } from "./product.ts";

/** Runtime configuration, read once from the environment. An empty value means the default. */
export interface Config {
  port: number;
  publicUrl: string;
  /** BRANDING_URL: where a hosted form's "Made with formsvc" links; the app's sign-up page by default. */
  brandingUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  kafkaBrokers: string[];
  redisUrl: string | undefined;
  rateLimitPerKey: number;
  rateLimitPerIp: number;
  /** Files and bytes of files a client address may upload to hosted forms in 10 minutes. */
  uploadRatePerIp: number;
  uploadBytesPerIp: number;
  webhookRetrySchedule: number[];
  /** WEBHOOK_DISABLE_AFTER_FAILING_SECONDS: a webhook whose deliveries all failed for this long is disabled. */
  webhookDisableAfterFailingSeconds: number;
  /** WEBHOOK_SECRET_OVERLAP_SECONDS: how long a rotated-out secret keeps signing beside the new one. */
  webhookSecretOverlapSeconds: number;
  /** WEBHOOK_MAX_ORIGIN_CONCURRENCY: the most attempts at a time to one receiver origin that keeps answering quickly. */
  webhookMaxOriginConcurrency: number;
  webhookAllowPrivateUrls: boolean;
  /** WEBHOOK_ALLOWED_CIDRS: non-public ranges webhooks may reach all the same (a LAN n8n); none by default. */
  webhookAllowedCidrs: AllowedRanges;
  countryHeader: string;
  /**
   * Where the gateway verifies third-party captcha tokens (settings.captcha), by provider:
   * CAPTCHA_TURNSTILE_VERIFY_URL, CAPTCHA_HCAPTCHA_VERIFY_URL, CAPTCHA_RECAPTCHA_VERIFY_URL; each
   * provider's own siteverify endpoint by default.
   */
  captchaVerifyUrls: Record<"turnstile" | "hcaptcha" | "recaptcha", string>;
  secretKey: string | undefined;
  /** S3-compatible file storage (S3_*); undefined keeps files under DATA_DIR/files. */
  s3: S3Settings | undefined;
  /** Storage quotas of uploaded files and when uploads nobody keeps are swept (submissions). */
  files: FileSettings;
  /** How long finished and internal rows are kept, and how often each service prunes (retention.ts). */
  retention: RetentionSettings;
  /** Wall-clock limit of one response's calculated fields in submissions (milliseconds). */
  calculatedFieldTimeoutMs: number;
  /** Express "trust proxy" setting; false unless TRUST_PROXY is set. */
  trustProxy: boolean | number | string;
  logLevel: string;
  /**
   * LOG_FORMAT: `json` puts every process's JSON log lines on `npm start`'s stdout; `pretty` (the default)
   * writes them to files under DATA_DIR/logs and shows the launcher's own lines short.
   */
  logFormat: "json" | "pretty";
  /** SMTP_URL: where mail is sent (`smtp://user:pass@host:587`); without it mail is written to DATA_DIR/mail. */
  smtpUrl: string | undefined;
  /** MAIL_FROM: the From of every mail; `formsvc <no-reply@PUBLIC_URL's host>` by default. */
  mailFrom: string;
  /** RESPONSE_RATE_PER_IP: responses (and saves) a client address may post to hosted forms a minute. */
  responseRatePerIp: number;
  /** Interface the RPC services listen on: 127.0.0.1 on one machine, 0.0.0.0 in a cluster. */
  listenHost: string;
  /**
   * API_KEY_CACHE: identity keeps verified API keys in memory, dropped on every replica by Postgres
   * notices when a key or its user changes (on by default; `off` reads the database on every request).
   */
  apiKeyCache: boolean;
  /**
   * ONE_PROCESS: the launcher runs every service and the gateway in one Node process (off by default: one
   * process each). They still talk over their ports; what they share is one Node and one copy of each module.
   */
  oneProcess: boolean;
  /** RPC_PROTOCOL (`rpcProtocolOf`). */
  rpcProtocol: "connect" | "grpc";
  /**
   * OPEN_FORM_CACHE: submissions keeps the forms respondents post to in memory, dropped on every replica
   * by Postgres notices when a form changes (on by default; `off` asks forms on every submit).
   */
  openFormCache: boolean;
  /**
   * WEBHOOK_CACHE: delivery keeps webhooks (and each form's subscribed ones) in memory, dropped on every
   * replica by Postgres notices when a webhook changes (on by default; `off` asks webhooks every time).
   */
  webhookCache: boolean;
  /**
   * MEMBERSHIP_CACHE: forms keeps each caller's workspace (membership, role, plan) in memory, dropped on
   * every replica by Postgres notices when the workspace or a membership changes (on by default; `off`
   * asks identity on every request).
   */
  membershipCache: boolean;
  /** SIGNUP: who may make an account in the app (signUpPolicy). */
  signUp: SignUpPolicy;
  /** OIDC_*: sign-in through an OpenID Connect provider (oidcSettingsOf); undefined when OIDC_ISSUER is unset. */
  oidc: OidcSettings | undefined;
  /** Addresses of the internal RPC services. */
  services: Record<ServiceName, string>;
}

/**
 * Who may make an account in the app: anyone (`open`, the default); only someone invited to a workspace
 * (`invite-only`); or only addresses at the listed domains (`domains:example.com,example.org`), whom
 * invitations alone may reach too. The operator's CLI makes accounts whatever it says.
 */
export type SignUpPolicy = { mode: "open" } | { mode: "invite-only" } | { mode: "domains"; domains: string[] };

/** SIGNUP's default: anyone may sign up. */
export const openSignUp: SignUpPolicy = { mode: "open" };

/** A domain of email addresses as SIGNUP and workspaces' auto-join domains name it: lower-case, at least one dot. */
export const emailDomainPattern = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;

/** SIGNUP parsed: `open`, `invite-only` or `domains:` and a comma-separated list of domains. */
export function signUpPolicyOf(env: Env = process.env): SignUpPolicy {
  const raw = value(env, "SIGNUP")?.trim().toLowerCase() ?? "open";
  if (raw === "open") return openSignUp;
  if (raw === "invite-only") return { mode: raw };
  if (raw.startsWith("domains:")) {
    const domains = raw.slice("domains:".length).split(",").map((d) => d.trim().replace(/^@/, "")).filter(Boolean);
    if (domains.length && domains.every((d) => emailDomainPattern.test(d))) return { mode: "domains", domains };
  }
  throw new ConfigError(`SIGNUP must be open, invite-only or domains:example.com,example.org, got "${raw}"`);
}

/** Sign-in through an OpenID Connect provider (the gateway runs the authorization-code flow with PKCE). */
export interface OidcSettings {
  /** OIDC_ISSUER: the provider's issuer URL (its discovery document is at `/.well-known/openid-configuration` under it). */
  issuer: string;
  /** OIDC_CLIENT_ID and OIDC_CLIENT_SECRET: this installation's client at the provider; no secret makes a public client. */
  clientId: string;
  clientSecret: string | undefined;
  /** OIDC_NAME: the provider's name on the sign-in button ("Sign in with <name>"). */
  name: string;
  /** OIDC_ONLY: password sign-in and sign-up are hidden in the app and refused by the gateway. */
  only: boolean;
}

/** Whether `url` is plain http on this machine (a provider run by a test or a developer), where http is allowed. */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
}

/** OIDC_* parsed: undefined without OIDC_ISSUER; an https issuer (http only on loopback) and a client id otherwise. */
export function oidcSettingsOf(env: Env = process.env): OidcSettings | undefined {
  const issuer = value(env, "OIDC_ISSUER");
  const only = bool(env, "OIDC_ONLY", false);
  if (issuer === undefined) {
    if (only) throw new ConfigError("OIDC_ONLY=true needs OIDC_ISSUER (and OIDC_CLIENT_ID): otherwise nobody could sign in");
    return undefined;
  }
  const url = URL.canParse(issuer) ? new URL(issuer) : undefined;
  if (!url || !(url.protocol === "https:" || isLoopbackHttp(url))) {
    throw new ConfigError(`OIDC_ISSUER must be an https URL (http only on localhost or 127.0.0.1), got "${issuer}"`);
  }
  const clientId = value(env, "OIDC_CLIENT_ID");
  if (clientId === undefined) throw new ConfigError("OIDC_CLIENT_ID is required with OIDC_ISSUER");
  return { issuer, clientId, clientSecret: value(env, "OIDC_CLIENT_SECRET"), name: value(env, "OIDC_NAME") ?? "single sign-on", only };
}

export interface S3Settings {
  /** S3_ENDPOINT: an S3-compatible server's URL; AWS's own endpoint of the region when absent. */
  endpoint: string | undefined;
  region: string;
  bucket: string;
  /** S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY; the SDK's default credential chain when absent. */
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** S3_FORCE_PATH_STYLE: `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint>/<key>`. */
  forcePathStyle: boolean;
  /** Prefix of every object key (tests share one bucket). */
  prefix?: string;
}

export interface FileSettings {
  /** STORAGE_QUOTA_PER_FORM, STORAGE_QUOTA_PER_WORKSPACE: bytes of uploads kept, attached or not. */
  formQuotaBytes: number;
  workspaceQuotaBytes: number;
  /** UPLOAD_UNATTACHED_TTL_SECONDS: an upload no response names is swept after this long. */
  unattachedTtlSeconds: number;
  /** UPLOAD_ABANDONED_TTL_SECONDS: the uploads of a partial response not saved for this long are swept. */
  abandonedTtlSeconds: number;
  /** UPLOAD_SWEEP_INTERVAL_SECONDS: how often submissions sweeps. */
  sweepIntervalSeconds: number;
}

/** 1 GiB of files per form, 10 GiB per workspace; 24 h for unattached uploads, 30 days for abandoned ones. */
export const defaultFileSettings: FileSettings = {
  formQuotaBytes: 1024 ** 3,
  workspaceQuotaBytes: 10 * 1024 ** 3,
  unattachedTtlSeconds: 24 * 60 * 60,
  abandonedTtlSeconds: 30 * 24 * 60 * 60,
  sweepIntervalSeconds: 60 * 60,
};

export interface RetentionSettings {
  /** DELIVERY_RETENTION_DAYS (fractional allowed): finished deliveries, their attempts and payloads are kept this long. */
  deliveryDays: number;
  /** RETENTION_SAFETY_SECONDS: internal rows (the outbox, sent mail) stay this long after every consumer has passed them. */
  safetySeconds: number;
  /** RETENTION_INTERVAL_SECONDS: how often each service runs a retention pass. */
  intervalSeconds: number;
  /**
   * RETENTION_PARTITION_SECONDS: the time span of one partition of the delivery tables; by default a tenth of
   * the delivery retention, between a minute and a week (90 days: 7-day partitions, 13 to 15 of them).
   */
  partitionSeconds: number;
}

/** 90 days of deliveries (Svix's default), internal rows an hour past their last consumer, a pass every 10 minutes. */
export const defaultRetentionSettings = { deliveryDays: 90, safetySeconds: 60 * 60, intervalSeconds: 10 * 60 };

/** The default partition span for a retention: a tenth of it, between a minute and a week. */
export function defaultPartitionSeconds(deliveryDays: number): number {
  return Math.round(Math.min(7 * 86_400, Math.max(60, (deliveryDays * 86_400) / 10)));
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

/** A webhook whose every delivery attempt failed for 5 days is disabled (Svix's rule). */
export const defaultWebhookDisableAfterFailingSeconds = 5 * 24 * 60 * 60;

/** A rotated-out webhook secret keeps signing (beside the new one) for 24 hours. */
export const defaultWebhookSecretOverlapSeconds = 24 * 60 * 60;

/** Milliseconds one response's calculated fields may take in submissions. */
export const defaultCalculatedFieldTimeoutMs = 100;

/** Files (UPLOAD_RATE_PER_IP) and bytes (UPLOAD_BYTES_PER_IP, 100 MiB) per address in 10 minutes. */
export const defaultUploadRatePerIp = 30;
export const defaultUploadBytesPerIp = 100 * 1024 * 1024;

/** Posts a client address may make to hosted forms a minute (RESPONSE_RATE_PER_IP). */
export const defaultResponseRatePerIp = 60;

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

export function value(env: Env, name: string): string | undefined {
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

function allowedCidrs(env: Env): AllowedRanges {
  try {
    return parseAllowedCidrs(value(env, "WEBHOOK_ALLOWED_CIDRS") ?? "");
  } catch (err) {
    throw new ConfigError(`WEBHOOK_ALLOWED_CIDRS: ${(err as Error).message}`);
  }
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
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

function s3Settings(env: Env): S3Settings | undefined {
  const bucket = value(env, "S3_BUCKET");
  const endpoint = value(env, "S3_ENDPOINT");
  if (bucket === undefined) {
    if (endpoint !== undefined) throw new ConfigError("S3_ENDPOINT is set but S3_BUCKET is not");
    return undefined;
  }
  if (endpoint !== undefined && !/^https?:\/\/[^/]/.test(endpoint)) throw new ConfigError(`S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  const accessKeyId = value(env, "S3_ACCESS_KEY_ID");
  const secretAccessKey = value(env, "S3_SECRET_ACCESS_KEY");
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError("S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together");
  }
  return {
    endpoint,
    region: value(env, "S3_REGION") ?? "us-east-1",
    bucket,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: bool(env, "S3_FORCE_PATH_STYLE", false),
  };
}

function retentionSettings(env: Env): RetentionSettings {
  const d = defaultRetentionSettings;
  const raw = value(env, "DELIVERY_RETENTION_DAYS");
  const deliveryDays = raw === undefined ? d.deliveryDays : Number(raw);
  if (!Number.isFinite(deliveryDays) || deliveryDays <= 0) throw new ConfigError(`DELIVERY_RETENTION_DAYS must be a positive number of days, got "${raw}"`);
  return {
    deliveryDays,
    safetySeconds: positiveInt(env, "RETENTION_SAFETY_SECONDS", d.safetySeconds),
    intervalSeconds: positiveInt(env, "RETENTION_INTERVAL_SECONDS", d.intervalSeconds),
    partitionSeconds: positiveInt(env, "RETENTION_PARTITION_SECONDS", defaultPartitionSeconds(deliveryDays)),
  };
}

function fileSettings(env: Env): FileSettings {
  const d = defaultFileSettings;
  return {
    formQuotaBytes: positiveInt(env, "STORAGE_QUOTA_PER_FORM", d.formQuotaBytes),
    workspaceQuotaBytes: positiveInt(env, "STORAGE_QUOTA_PER_WORKSPACE", d.workspaceQuotaBytes),
    unattachedTtlSeconds: positiveInt(env, "UPLOAD_UNATTACHED_TTL_SECONDS", d.unattachedTtlSeconds),
    abandonedTtlSeconds: positiveInt(env, "UPLOAD_ABANDONED_TTL_SECONDS", d.abandonedTtlSeconds),
    sweepIntervalSeconds: positiveInt(env, "UPLOAD_SWEEP_INTERVAL_SECONDS", d.sweepIntervalSeconds),
  };
}

function logFormat(env: Env): "json" | "pretty" {
  const raw = value(env, "LOG_FORMAT")?.toLowerCase() ?? "pretty";
  if (raw !== "json" && raw !== "pretty") throw new ConfigError(`LOG_FORMAT must be json or pretty, got "${raw}"`);
  return raw;
}

/** RPC_PROTOCOL: the protocol of the services' calls to each other (rpc.ts); every service serves both. */
export function rpcProtocolOf(env: Env = process.env): "connect" | "grpc" {
  const raw = value(env, "RPC_PROTOCOL")?.toLowerCase() ?? "connect";
  if (raw !== "connect" && raw !== "grpc") throw new ConfigError(`RPC_PROTOCOL must be connect or grpc, got "${raw}"`);
  return raw;
}

function defaultMailFrom(publicUrl: string | undefined): string {
  const host = publicUrl && URL.canParse(publicUrl) ? new URL(publicUrl).hostname : "localhost";
  return `${productName} <no-reply@${host}>`;
}

function smtpUrl(env: Env): string | undefined {
  const raw = value(env, "SMTP_URL");
  if (raw !== undefined && !/^smtps?:\/\/[^/]/.test(raw)) throw new ConfigError("SMTP_URL must be an smtp:// or smtps:// URL");
  return raw;
}

function brandingUrl(env: Env, publicUrl: string): string {
  const raw = value(env, "BRANDING_URL");
  if (raw === undefined) return `${publicUrl}/app/signup`;
  if (!/^https?:\/\/[^/]/.test(raw)) throw new ConfigError(`BRANDING_URL must be an http(s) URL, got "${raw}"`);
  return raw;
}

/** Each captcha provider's documented verify endpoint. */
export const defaultCaptchaVerifyUrls = {
  turnstile: "https://challenges.cloudflare.com/turnstile/v0/siteverify",
  hcaptcha: "https://api.hcaptcha.com/siteverify",
  recaptcha: "https://www.google.com/recaptcha/api/siteverify",
} as const;

function captchaVerifyUrls(env: Env): Config["captchaVerifyUrls"] {
  const urls = { ...defaultCaptchaVerifyUrls } as Config["captchaVerifyUrls"];
  for (const provider of Object.keys(urls) as (keyof typeof urls)[]) {
    const name = `CAPTCHA_${provider.toUpperCase()}_VERIFY_URL`;
    const raw = value(env, name);
    if (raw === undefined) continue;
    if (!/^https?:\/\/[^/]/.test(raw)) throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
    urls[provider] = raw;
  }
  return urls;
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
  const publicUrl = (value(env, "PUBLIC_URL") ?? `http://localhost:${port}`).replace(/\/+$/, "");
  return {
    port,
    publicUrl,
    brandingUrl: brandingUrl(env, publicUrl),
    dataDir: resolve(value(env, "DATA_DIR") ?? "./.data"),
    databaseUrl: value(env, "DATABASE_URL"),
    kafkaBrokers: (value(env, "KAFKA_BROKERS") ?? "").split(",").map((b) => b.trim()).filter(Boolean),
    redisUrl: value(env, "REDIS_URL"),
    rateLimitPerKey: positiveInt(env, "RATE_LIMIT_PER_KEY", 100),
    rateLimitPerIp: positiveInt(env, "RATE_LIMIT_PER_IP", 300),
    uploadRatePerIp: positiveInt(env, "UPLOAD_RATE_PER_IP", defaultUploadRatePerIp),
    uploadBytesPerIp: positiveInt(env, "UPLOAD_BYTES_PER_IP", defaultUploadBytesPerIp),
    webhookRetrySchedule: retrySchedule(env),
    webhookDisableAfterFailingSeconds: positiveInt(env, "WEBHOOK_DISABLE_AFTER_FAILING_SECONDS", defaultWebhookDisableAfterFailingSeconds),
    webhookSecretOverlapSeconds: positiveInt(env, "WEBHOOK_SECRET_OVERLAP_SECONDS", defaultWebhookSecretOverlapSeconds),
    webhookMaxOriginConcurrency: positiveInt(env, "WEBHOOK_MAX_ORIGIN_CONCURRENCY", 32),
    webhookAllowPrivateUrls: bool(env, "WEBHOOK_ALLOW_PRIVATE_URLS", false),
    webhookAllowedCidrs: allowedCidrs(env),
    countryHeader: (value(env, "COUNTRY_HEADER") ?? "cf-ipcountry").toLowerCase(),
    captchaVerifyUrls: captchaVerifyUrls(env),
    secretKey: value(env, "SECRET_KEY"),
    s3: s3Settings(env),
    files: fileSettings(env),
    retention: retentionSettings(env),
    calculatedFieldTimeoutMs: positiveInt(env, "CALCULATED_FIELD_TIMEOUT_MS", defaultCalculatedFieldTimeoutMs),
    trustProxy: trustProxy(env),
    logLevel: value(env, "LOG_LEVEL") ?? "info",
    logFormat: logFormat(env),
    smtpUrl: smtpUrl(env),
    mailFrom: value(env, "MAIL_FROM") ?? defaultMailFrom(value(env, "PUBLIC_URL")),
    responseRatePerIp: positiveInt(env, "RESPONSE_RATE_PER_IP", defaultResponseRatePerIp),
    listenHost: value(env, "LISTEN_HOST") ?? "127.0.0.1",
    apiKeyCache: bool(env, "API_KEY_CACHE", true),
    oneProcess: bool(env, "ONE_PROCESS", false),
    rpcProtocol: rpcProtocolOf(env),
    openFormCache: bool(env, "OPEN_FORM_CACHE", true),
    webhookCache: bool(env, "WEBHOOK_CACHE", true),
    membershipCache: bool(env, "MEMBERSHIP_CACHE", true),
    signUp: signUpPolicyOf(env),
    oidc: oidcSettingsOf(env),
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
