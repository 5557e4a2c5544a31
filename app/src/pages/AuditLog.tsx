// The workspace's audit log, for its owner and admins: who changed what and when, newest first, filtered by
// action, actor and a date range, a hundred at a time ("Show more" for the rest).
import { useState } from "react";
import { get } from "../api.ts";
import { EmptyState, ErrorState, Loading, useLoad } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import { useSession } from "../session.tsx";
import type { AuditActionName, AuditEvent, Member } from "../types.ts";
import { labelsOf, t } from "../i18n/messages.ts";

interface Page {
  items: AuditEvent[];
  nextCursor: string | null;
}

/** Every action the log records (a new action fails the type check until it is named here, and in the catalogues). */
const auditActionNames = Object.keys(
  {
    "form.create": 1,
    "form.update": 1,
    "form.publish": 1,
    "form.close": 1,
    "form.reopen": 1,
    "form.duplicate": 1,
    "form.trash": 1,
    "form.restore": 1,
    "form.purge": 1,
    "responses.export": 1,
    "submission.delete": 1,
    "link.create": 1,
    "link.revoke": 1,
    "webhook.create": 1,
    "webhook.update": 1,
    "webhook.delete": 1,
    "webhook.rotate_secret": 1,
    "webhook.test": 1,
    "webhook.recover": 1,
    "delivery.retry": 1,
    "api_key.create": 1,
    "api_key.delete": 1,
    "workspace.create": 1,
    "workspace.rename": 1,
    "workspace.set_plan": 1,
    "workspace.set_auto_join_domains": 1,
    "workspace.require_two_factor": 1,
    "member.invite": 1,
    "member.revoke_invitation": 1,
    "member.accept": 1,
    "member.role_change": 1,
    "member.remove": 1,
    "session.sign_in": 1,
    "session.sign_in_failed": 1,
    "two_factor.enable": 1,
    "two_factor.disable": 1,
    "two_factor.recovery_codes": 1,
  } satisfies Record<AuditActionName, 1>,
) as AuditActionName[];

/** Every action the log records, as people read it. */
export const auditActionLabels: Readonly<Record<AuditActionName, string>> = labelsOf(auditActionNames, (name) => `audit.action.${name}`);

/** A day (yyyy-mm-dd, as a date input gives it) as the instant it starts in this browser's zone; `days` later. */
const dayStart = (day: string, days = 0) => {
  const date = new Date(`${day}T00:00:00`);
  date.setDate(date.getDate() + days);
  return date.toISOString();
};

export function AuditLogPage() {
  const { workspace } = useSession();
  const [action, setAction] = useState("");
  const [actor, setActor] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const query = new URLSearchParams({ limit: "100" });
  if (action) query.set("action", action);
  if (actor) query.set("actor", actor);
  if (from) query.set("since", dayStart(from));
  if (to) query.set("until", dayStart(to, 1));
  const path = workspace ? `/workspaces/${workspace.id}/audit-events?${query}` : "";
  const first = useLoad(() => (path ? get<Page>(path) : Promise.resolve({ items: [], nextCursor: null })), [path]);
  const [more, setMore] = useState<{ path: string; items: AuditEvent[]; cursor: string | null }>();
  const members = useLoad(() => (workspace ? get<{ items: Member[] }>(`/workspaces/${workspace.id}/members`) : Promise.resolve({ items: [] })), [workspace?.id]);
  const names = new Map((members.data?.items ?? []).map((m) => [m.user.id, m.user.name || m.user.email]));

  if (!workspace || (workspace.role !== "owner" && workspace.role !== "admin")) {
    return (
      <div className="page">
        <h1>{t("nav.auditLog")}</h1>
        <EmptyState title={t("audit.onlyManagers")} />
      </div>
    );
  }
  const shownMore = more?.path === path ? more : undefined;
  const events = [...(first.data?.items ?? []), ...(shownMore?.items ?? [])];
  const cursor = shownMore ? shownMore.cursor : (first.data?.nextCursor ?? null);
  const showMore = async () => {
    const page = await get<Page>(`${path}&cursor=${encodeURIComponent(cursor!)}`);
    setMore({ path, items: [...(shownMore?.items ?? []), ...page.items], cursor: page.nextCursor });
  };
  const who = (event: AuditEvent) => {
    const person = event.actor.userId ? (names.get(event.actor.userId) ?? event.actor.userId) : "";
    if (event.actor.type === "api_key") return t("audit.byKey", { person, key: event.actor.apiKeyId ?? "" });
    if (event.actor.type === "system") return t("audit.system");
    if (event.actor.type === "anonymous") return t("audit.anonymous");
    return person;
  };

  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{t("nav.auditLog")}</h1>
          <p className="muted">{t("audit.intro", { workspace: workspace.name })}</p>
        </div>
      </div>
      <section className="card stack">
        <div className="toolbar" role="group" aria-label={t("audit.filters")}>
          <label>
            {t("audit.action")}{" "}
            <select value={action} onChange={(e) => setAction(e.target.value)}>
              <option value="">{t("audit.everyAction")}</option>
              {Object.entries(auditActionLabels).map(([name, label]) => (
                <option key={name} value={name}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            {t("audit.who")}{" "}
            <select value={actor} onChange={(e) => setActor(e.target.value)}>
              <option value="">{t("audit.anyone")}</option>
              {(members.data?.items ?? []).map((m) => (
                <option key={m.user.id} value={m.user.id}>
                  {m.user.name || m.user.email}
                </option>
              ))}
              <option value="system">{t("audit.theSystem")}</option>
            </select>
          </label>
          <label>
            {t("summary.from")} <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
          </label>
          <label>
            {t("summary.to")} <input type="date" value={to} onChange={(e) => setTo(e.target.value)} />
          </label>
        </div>
        {first.loading && !first.data ? (
          <Loading what={t("audit.loading")} />
        ) : first.error ? (
          <ErrorState message={first.error} onRetry={first.reload} />
        ) : events.length === 0 ? (
          <EmptyState title={t("audit.none")} />
        ) : (
          <table className="table" aria-label={t("audit.events")}>
            <thead>
              <tr>
                {[t("audit.when"), t("audit.who"), t("audit.address"), t("audit.action"), t("audit.record"), t("audit.changes")].map((c) => (
                  <th key={c} scope="col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.id}>
                  <td>{formatDateTime(event.occurredAt)}</td>
                  <td>{who(event)}</td>
                  <td>{event.address}</td>
                  <td data-action={event.action}>{auditActionLabels[event.action] ?? event.action}</td>
                  <td>
                    {event.target.type} <code>{event.target.id}</code>
                  </td>
                  <td>{event.changes.map((c) => (c.value === undefined ? c.field : `${c.field}: ${c.value}`)).join(", ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {cursor && (
          <button type="button" onClick={() => void showMore()}>
            {t("audit.showMore")}
          </button>
        )}
      </section>
    </div>
  );
}
