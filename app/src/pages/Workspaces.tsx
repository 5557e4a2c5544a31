// Workspaces: switch, create; members with their roles (the owner and admins change roles, remove
// members and invite by email, people without an account too); the plan and its branding entitlement.
import { useId, useState, type FormEvent } from "react";
import { del, get, patch, post } from "../api.ts";
import { ErrorState, InlineMessage, Loading, useLoad, useNotify } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import { useSession } from "../session.tsx";
import type { Member, Role, User, Workspace } from "../types.ts";

const roleLabels: Record<Role, string> = { owner: "Owner", admin: "Admin", member: "Member" };

function Members({ workspace }: { workspace: Workspace }) {
  const members = useLoad(() => get<{ items: Member[] }>(`/workspaces/${workspace.id}/members`), [workspace.id]);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const notify = useNotify();
  const id = useId();
  const manages = workspace.role === "owner" || workspace.role === "admin";
  /** Runs a change, shows its message, reloads the list; an error is shown under the list. */
  const change = async (work: () => Promise<string>) => {
    setBusy(true);
    setError(undefined);
    try {
      notify(await work());
      members.reload();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const invite = (e: FormEvent) => {
    e.preventDefault();
    void change(async () => {
      const res = await post<{ invited: boolean; email?: string; user?: User }>(`/workspaces/${workspace.id}/invites`, { email, role });
      setEmail("");
      return res.invited ? `Invitation mailed to ${res.email}.` : `${res.user!.name} (${res.user!.email}) is now a member of ${workspace.name}.`;
    });
  };
  const setMemberRole = (m: Member, next: Role) =>
    change(async () => {
      await patch(`/workspaces/${workspace.id}/members/${m.user.id}`, { role: next });
      return `${m.user.name} is now ${next === "admin" ? "an admin" : "a member"} of ${workspace.name}.`;
    });
  const remove = (m: Member) =>
    change(async () => {
      await del(`/workspaces/${workspace.id}/members/${m.user.id}`);
      return `${m.user.name} no longer has access to ${workspace.name}.`;
    });
  return (
    <div className="members">
      <h4>Members</h4>
      {members.loading && !members.data ? (
        <Loading what="Loading members" />
      ) : members.error ? (
        <ErrorState message={members.error} onRetry={members.reload} />
      ) : (
        <ul className="plain-list">
          {members.data!.items.map((m) => (
            <li key={m.user.id} className="row">
              <span>
                {m.user.name} <span className="muted">&lt;{m.user.email}&gt; · {m.role === "owner" ? "owner" : `since ${formatDateTime(m.joinedAt)}`}</span>
              </span>
              {manages && m.role !== "owner" ? (
                <>
                  <select aria-label={`Role of ${m.user.name}`} value={m.role ?? undefined} disabled={busy} onChange={(e) => void setMemberRole(m, e.target.value as Role)}>
                    <option value="member">Member</option>
                    <option value="admin">Admin</option>
                  </select>
                  <button type="button" disabled={busy} onClick={() => void remove(m)}>
                    Remove {m.user.name}
                  </button>
                </>
              ) : (
                <span className="badge">{m.role && roleLabels[m.role]}</span>
              )}
            </li>
          ))}
        </ul>
      )}
      {manages && (
        <>
          <form className="row invite" onSubmit={invite}>
            <div className="field field-inline">
              <label htmlFor={`${id}-email`}>Invite by email</label>
              <input id={`${id}-email`} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} aria-describedby={`${id}-hint`} />
            </div>
            <div className="field field-inline">
              <label htmlFor={`${id}-role`}>as</label>
              <select id={`${id}-role`} value={role} onChange={(e) => setRole(e.target.value as Role)}>
                <option value="member">Member</option>
                <option value="admin">Admin</option>
              </select>
            </div>
            <button type="submit" disabled={busy}>
              {busy ? "Inviting…" : "Invite"}
            </button>
          </form>
          <p className="hint" id={`${id}-hint`}>
            Someone with an account joins at once; anyone else gets an email with a link that signs them up into this workspace. Removing someone ends their access at once, by key or session.
          </p>
        </>
      )}
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
    </div>
  );
}

export function WorkspacesPage() {
  const { workspaces, workspace: current, selectWorkspace, refreshWorkspaces } = useSession();
  const [name, setName] = useState("");
  const [error, setError] = useState<string>();
  const notify = useNotify();
  const id = useId();
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      const ws = await post<Workspace>("/workspaces", { name });
      await refreshWorkspaces();
      selectWorkspace(ws.id);
      setName("");
      notify(`Workspace “${ws.name}” created; it is now the current one.`);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Workspaces</h1>
          <p className="muted">A workspace holds forms; everyone in it sees and edits them. Its plan decides what its forms may do.</p>
        </div>
      </div>
      {workspaces.length === 0 && <Loading what="Loading workspaces" />}
      <ul className="workspaces">
        {workspaces.map((ws) => (
          <li key={ws.id} className={`card workspace${ws.id === current?.id ? " current" : ""}`}>
            <div className="webhook-head">
              <div>
                <h2>
                  {ws.name} {ws.id === current?.id && <span className="badge badge-published">Current</span>}
                </h2>
                <p className="muted">
                  {ws.personal ? "Personal workspace" : ws.owned ? "You own it" : "Shared with you"} · your role: {ws.role && roleLabels[ws.role]} · created {formatDateTime(ws.createdAt)}
                </p>
                <dl className="facts">
                  <div>
                    <dt>Plan</dt>
                    <dd>{ws.plan === "pro" ? "Pro" : "Free"}</dd>
                  </div>
                  <div>
                    <dt>Remove branding</dt>
                    <dd>{ws.entitlements.removeBranding ? "Included: forms may hide “Made with Formsvc”" : "Not included: forms show “Made with Formsvc”"}</dd>
                  </div>
                </dl>
                {ws.plan !== "pro" && (
                  <p className="hint">
                    Plans are changed by whoever runs this installation, with <code>npm run -s cli -- workspace:set-plan --workspace {ws.id} --plan pro</code>.
                  </p>
                )}
              </div>
              {ws.id !== current?.id && (
                <button
                  type="button"
                  onClick={() => {
                    selectWorkspace(ws.id);
                    notify(`Switched to ${ws.name}.`, "info");
                  }}
                >
                  Switch to {ws.name}
                </button>
              )}
            </div>
            <Members workspace={ws} />
          </li>
        ))}
      </ul>
      <form className="card stack" onSubmit={create}>
        <h2>New workspace</h2>
        <div className="field">
          <label htmlFor={`${id}-name`}>Workspace name</label>
          <input id={`${id}-name`} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        {error && <InlineMessage kind="error">{error}</InlineMessage>}
        <div className="actions">
          <button type="submit" className="primary">
            Create workspace
          </button>
        </div>
      </form>
    </div>
  );
}
