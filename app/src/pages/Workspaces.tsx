// Workspaces: switch, create, rename; members with their roles (the owner and admins change roles, remove
// members, invite by email and revoke pending invitations); the invitations waiting for the signed-in
// person, accepted here; the plan and its branding entitlement.
import { useId, useState, type FormEvent } from "react";
import { del, get, patch, post, put } from "../api.ts";
import { ErrorState, InlineMessage, Loading, useLoad, useNotify } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import { Link } from "../router.tsx";
import { useSession } from "../session.tsx";
import type { Member, PendingInvitation, Role, Workspace } from "../types.ts";
import { AutoJoinDomains } from "./AutoJoinDomains.tsx";

const roleLabels: Record<Role, string> = { owner: "Owner", admin: "Admin", member: "Member" };

/** The owner's switch: every member must sign in with a second factor (their own first). */
function TwoFactorRequirement({ workspace }: { workspace: Workspace }) {
  const { user, refreshWorkspaces } = useSession();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // Shown at once; back to what the workspace says when the change is refused.
  const [required, setRequired] = useState(workspace.requireTwoFactor);
  const notify = useNotify();
  const id = useId();
  const set = async (next: boolean) => {
    setBusy(true);
    setError(undefined);
    setRequired(next);
    try {
      await put(`/workspaces/${workspace.id}/two-factor`, { required: next });
      await refreshWorkspaces();
      notify(next ? `Members of ${workspace.name} now sign in with two factors.` : `Two-factor sign-in is up to each member of ${workspace.name} again.`);
    } catch (err) {
      setRequired(workspace.requireTwoFactor);
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="field">
      <label className="check" htmlFor={id}>
        <input id={id} type="checkbox" checked={required} disabled={busy} onChange={(e) => void set(e.target.checked)} /> Require
        two-factor sign-in of every member
      </label>
      {!user?.twoFactorEnabled && !required && (
        <p className="hint">
          Turn it on for yourself first, under <Link to="/settings/security">Security</Link>.
        </p>
      )}
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
    </div>
  );
}

function Members({ workspace }: { workspace: Workspace }) {
  const manages = workspace.role === "owner" || workspace.role === "admin";
  const members = useLoad(() => get<{ items: Member[] }>(`/workspaces/${workspace.id}/members`), [workspace.id]);
  const invitations = useLoad(
    () => (manages ? get<{ items: PendingInvitation[] }>(`/workspaces/${workspace.id}/invites`) : Promise.resolve({ items: [] })),
    [workspace.id, manages],
  );
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const notify = useNotify();
  const id = useId();
  /** Runs a change, shows its message, reloads the lists; an error is shown under them. */
  const change = async (work: () => Promise<string>) => {
    setBusy(true);
    setError(undefined);
    try {
      notify(await work());
      members.reload();
      invitations.reload();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const invite = (e: FormEvent) => {
    e.preventDefault();
    void change(async () => {
      const invitation = await post<PendingInvitation>(`/workspaces/${workspace.id}/invites`, { email, role });
      setEmail("");
      return `Invitation mailed to ${invitation.email}.`;
    });
  };
  const revoke = (invitation: PendingInvitation) =>
    change(async () => {
      await del(`/workspaces/${workspace.id}/invites/${invitation.id}`);
      return `The invitation to ${invitation.email} is revoked; its link no longer works.`;
    });
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
      {manages && invitations.data && invitations.data.items.length > 0 && (
        <>
          <h4>Pending invitations</h4>
          <ul className="plain-list">
            {invitations.data.items.map((i) => (
              <li key={i.id} className="row">
                <span>
                  {i.email}{" "}
                  <span className="muted">
                    · {i.role && roleLabels[i.role]} · invited by {i.inviterName} · link valid until {formatDateTime(i.expiresAt)}
                  </span>
                </span>
                <button type="button" disabled={busy} onClick={() => void revoke(i)}>
                  Revoke invitation to {i.email}
                </button>
              </li>
            ))}
          </ul>
        </>
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
            Everyone invited gets an email with a link (it signs someone new up into this workspace); someone with an account can also accept it here, under Invitations for you. Nobody joins without accepting. Removing someone ends their access at once, by key or session.
          </p>
        </>
      )}
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
    </div>
  );
}

/** The invitations waiting for the signed-in person (shown once their address is verified), accepted here. */
function InvitationsForYou() {
  const { refreshWorkspaces, selectWorkspace } = useSession();
  const invitations = useLoad(() => get<{ items: PendingInvitation[] }>("/invitations"), []);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const notify = useNotify();
  const accept = async (invitation: PendingInvitation) => {
    setBusy(true);
    setError(undefined);
    try {
      const { workspace } = await post<{ workspace: Workspace }>(`/invitations/${invitation.id}/accept`, {});
      await refreshWorkspaces();
      selectWorkspace(workspace.id);
      notify(`You joined ${workspace.name} as ${workspace.role === "admin" ? "an admin" : "a member"}; it is now the current workspace.`);
      invitations.reload();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  if (!invitations.data?.items.length && !error) return null;
  return (
    <section className="card stack">
      <h2>Invitations for you</h2>
      <ul className="plain-list">
        {invitations.data?.items.map((i) => (
          <li key={i.id} className="row">
            <span>
              {i.workspaceName} <span className="muted">· as {i.role && roleLabels[i.role]} · from {i.inviterName}</span>
            </span>
            <button type="button" className="primary" disabled={busy} onClick={() => void accept(i)}>
              Join {i.workspaceName}
            </button>
          </li>
        ))}
      </ul>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
    </section>
  );
}

/** The owner's and admins' rename of a workspace. */
function RenameWorkspace({ workspace }: { workspace: Workspace }) {
  const { refreshWorkspaces } = useSession();
  const notify = useNotify();
  const [name, setName] = useState(workspace.name);
  const [error, setError] = useState<string>();
  const id = useId();
  const rename = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      const renamed = await patch<Workspace>(`/workspaces/${workspace.id}`, { name });
      await refreshWorkspaces();
      notify(`Workspace renamed “${renamed.name}”.`);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form className="row" onSubmit={rename}>
      <label htmlFor={`${id}-rename`}>New name for {workspace.name}</label>
      <input id={`${id}-rename`} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      <button type="submit" disabled={name.trim() === workspace.name}>
        Rename
      </button>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
    </form>
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
      <InvitationsForYou />
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
                    <dt>Two-factor sign-in</dt>
                    <dd>{ws.requireTwoFactor ? "Required of every member" : "Up to each member"}</dd>
                  </div>
                  <div>
                    <dt>Remove branding</dt>
                    <dd>{ws.entitlements.removeBranding ? "Included: forms may hide “Made with formsvc”" : "Not included: forms show “Made with formsvc”"}</dd>
                  </div>
                </dl>
                {ws.role === "owner" && <TwoFactorRequirement workspace={ws} />}
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
            {(ws.role === "owner" || ws.role === "admin") && <RenameWorkspace workspace={ws} />}
            <Members workspace={ws} />
            <AutoJoinDomains workspace={ws} />
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
