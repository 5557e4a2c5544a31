// Text for dates, statuses, counts and sizes, in the language and locale the app speaks (i18n/messages.ts).
import { currentLocale, t } from "../i18n/messages.ts";
import type { FormStatus } from "../types.ts";

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "—";
  return date.toLocaleString(currentLocale(), { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** A number as the person's locale writes it. */
export function formatNumber(value: number, options?: Intl.NumberFormatOptions): string {
  return new Intl.NumberFormat(currentLocale(), options).format(value);
}

/** "just now", "5 minutes ago", "3 hours ago", "2 days ago" (CLDR's words, through Intl), else the date. */
export function formatRelative(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return t("time.never");
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return "—";
  const seconds = Math.round((now - then) / 1000);
  if (seconds < 45) return t("time.justNow");
  const relative = new Intl.RelativeTimeFormat(currentLocale(), { numeric: "always" });
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return relative.format(-minutes, "minute");
  const hours = Math.round(minutes / 60);
  if (hours < 24) return relative.format(-hours, "hour");
  const days = Math.round(hours / 24);
  if (days < 7) return relative.format(-days, "day");
  return formatDateTime(iso);
}

export function statusLabel(status: FormStatus): string {
  return t(`status.${status}`);
}

/** A size in bytes, in the largest unit under 1,024 of it (one decimal). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return t("size.bytes", { count: bytes });
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${formatNumber(Math.round(value * 10) / 10)} ${units[unit]}`;
}
