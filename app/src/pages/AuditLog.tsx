// The workspace's audit log, for its owner and admins: who changed what and when, newest first, filtered by
// action, actor and a date range, a hundred at a time ("Show more" for the rest).
import { useState } from "react";
import { get } from "../api.ts";
import { EmptyState, ErrorState, Loading, useLoad } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import { useSession } from "../session.tsx";
import type { AuditActionName, AuditEvent, Member } from "../types.ts";

interface Page {
  items: AuditEvent[];
  nextCursor: string | null;
}

/** Every action the log records, as people read it (a new action fails the type check until it is named here). */
export const auditActionLabels: Record<AuditActionName, string> = {
  "form.create": "Form created",
  "form.update": "Form edited",
  "form.publish": "Form published",
  "form.close": "Form closed",
  "form.reopen": "Form reopened",
  "form.duplicate": "Form duplicated",
  "form.trash": "Form moved to the Trash",
  "form.restore": "Form restored",
  "form.purge": "Form deleted forever",
  "responses.export": "Responses exported",
  "submission.delete": "Response deleted",
  "link.create": "Single-use links created",
  "link.revoke": "Single-use link revoked",
  "webhook.create": "Webhook added",
  "webhook.update": "Webhook changed",
  "webhook.delete": "Webhook removed",
  "webhook.rotate_secret": "Webhook secret rotated",
  "webhook.test": "Webhook test event sent",
  "webhook.recover": "Webhook deliveries recovered",
  "delivery.retry": "Delivery retried",
  "api_key.create": "API key created",
  "api_key.delete": "API key deleted",
  "workspace.create": "Workspace created",
  "workspace.rename": "Workspace renamed",
  "workspace.set_plan": "Plan changed",
  "workspace.set_auto_join_domains": "Auto-join domains changed",
  "workspace.require_two_factor": "Two-factor requirement changed",
  "member.invite": "Member invited",
  "member.revoke_invitation": "Invitation revoked",
  "member.accept": "Invitation accepted",
  "member.role_change": "Role changed",
  "member.remove": "Member removed",
  "session.sign_in": "Signed in",
  "session.sign_in_failed": "Sign-in failed",
  "two_factor.enable": "Two-factor sign-in turned on",
  "two_factor.disable": "Two-factor sign-in turned off",
  "two_factor.recovery_codes": "New recovery codes made",
};

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
        <h1>Audit log</h1>
        <EmptyState title="Only the workspace's owner and admins see its audit log" />
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
    if (event.actor.type === "api_key") return `${person} (API key ${event.actor.apiKeyId})`;
    if (event.actor.type === "system") return "System";
    if (event.actor.type === "anonymous") return "Someone not signed in";
    return person;
  };

  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Audit log</h1>
          <p className="muted">Every change in {workspace.name}, its members' sign-ins and API keys, and exports of responses. Secrets, passwords and answers are never recorded.</p>
        </div>
      </div>
      <section className="card stack">
        <div className="toolbar" role="group" aria-label="Filters">
          <label>
            Action{" "}
            <select value={action} onChange={(e) => setAction(e.target.value)}>
              <option value="">Every action</option>
              {Object.entries(auditActionLabels).map(([name, label]) => (
                <option key={name} value={name}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Who{" "}
            <select value={actor} onChange={(e) => setActor(e.target.value)}>
              <option value="">Anyone</option>
              {(members.data?.items ?? []).map((m) => (
                <option key={m.user.id} value={m.user.id}>
                  {m.user.name || m.user.email}
                </option>
              ))}
              <option value="system">The system</option>
            </select>
          </label>
          <label>
            From <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
          </label>
          <label>
            To <input type="date" value={to} onChange={(e) => setTo(e.target.value)} />
          </label>
        </div>
        {first.loading && !first.data ? (
          <Loading what="Loading the audit log" />
        ) : first.error ? (
          <ErrorState message={first.error} onRetry={first.reload} />
        ) : events.length === 0 ? (
          <EmptyState title="No events match" />
        ) : (
          <table className="table" aria-label="Audit events">
            <thead>
              <tr>
                {["When", "Who", "Address", "Action", "Record", "Changes"].map((c) => (
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
            Show more events
          </button>
        )}
      </section>
    </div>
  );
}
