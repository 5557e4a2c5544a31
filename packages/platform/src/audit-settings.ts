// The audit log's settings (identity keeps the log; the README's Configuration names them).
import { bool, ConfigError, value, type Env } from "./config.ts";

export interface AuditSettings {
  /** AUDIT_RETENTION_DAYS (a fraction allowed): events older than this are pruned by the retention pass. */
  retentionDays: number;
  /** AUDIT_LOG_STDOUT: each recorded event is also written as one JSON line on identity's stdout. */
  stdout: boolean;
}

export const defaultAuditRetentionDays = 365;

export function auditSettingsOf(env: Env = process.env): AuditSettings {
  const raw = value(env, "AUDIT_RETENTION_DAYS");
  const retentionDays = raw === undefined ? defaultAuditRetentionDays : Number(raw);
  if (!Number.isFinite(retentionDays) || retentionDays <= 0) throw new ConfigError(`AUDIT_RETENTION_DAYS must be a positive number of days, got "${raw}"`);
  return { retentionDays, stdout: bool(env, "AUDIT_LOG_STDOUT", false) };
}
