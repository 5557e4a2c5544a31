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
import { t } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

/** A role's name in the language spoken. */
const roleLabel = (role: Role) => t("workspaces.role", { role });

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
      notify(next ? t("workspaces.twoFactorOn", { workspace: workspace.name }) : t("workspaces.twoFactorOff", { workspace: workspace.name }));
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
        <input id={id} type="checkbox" checked={required} disabled={busy} onChange={(e) => void set(e.target.checked)} />{" "}
        {t("workspaces.requireTwoFactor")}
      </label>
      {!user?.twoFactorEnabled && !required && (
        <p className="hint">
          {tRich("workspaces.yourselfFirst", { link: (chunks) => <Link to="/settings/security">{chunks}</Link> })}
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
      return t("workspaces.invited", { email: invitation.email });
    });
  };
  const revoke = (invitation: PendingInvitation) =>
    change(async () => {
      await del(`/workspaces/${workspace.id}/invites/${invitation.id}`);
      return t("workspaces.revoked", { email: invitation.email });
    });
  const setMemberRole = (m: Member, next: Role) =>
    change(async () => {
      await patch(`/workspaces/${workspace.id}/members/${m.user.id}`, { role: next });
      return t("workspaces.roleSet", { name: m.user.name, role: next, workspace: workspace.name });
    });
  const remove = (m: Member) =>
    change(async () => {
      await del(`/workspaces/${workspace.id}/members/${m.user.id}`);
      return t("workspaces.removed", { name: m.user.name, workspace: workspace.name });
    });
  return (
    <div className="members">
      <h4>{t("admin.members")}</h4>
      {members.loading && !members.data ? (
        <Loading what={t("workspaces.loadingMembers")} />
      ) : members.error ? (
        <ErrorState message={members.error} onRetry={members.reload} />
      ) : (
        <ul className="plain-list">
          {members.data!.items.map((m) => (
            <li key={m.user.id} className="row">
              <span>
                {m.user.name} <span className="muted">
                  &lt;{m.user.email}&gt; · {m.role === "owner" ? t("workspaces.owner") : t("workspaces.since", { when: formatDateTime(m.joinedAt) })}
                </span>
              </span>
              {manages && m.role !== "owner" ? (
                <>
                  <select aria-label={t("workspaces.roleOf", { name: m.user.name })} value={m.role ?? undefined} disabled={busy} onChange={(e) => void setMemberRole(m, e.target.value as Role)}>
                    <option value="member">{roleLabel("member")}</option>
                    <option value="admin">{roleLabel("admin")}</option>
                  </select>
                  <button type="button" disabled={busy} onClick={() => void remove(m)}>
                    {t("workspaces.remove", { name: m.user.name })}
                  </button>
                </>
              ) : (
                <span className="badge">{m.role && roleLabel(m.role)}</span>
              )}
            </li>
          ))}
        </ul>
      )}
      {manages && invitations.data && invitations.data.items.length > 0 && (
        <>
          <h4>{t("workspaces.pending")}</h4>
          <ul className="plain-list">
            {invitations.data.items.map((i) => (
              <li key={i.id} className="row">
                <span>
                  {i.email}{" "}
                  <span className="muted">
                    · {i.role && roleLabel(i.role)} · {t("workspaces.invitedBy", { inviter: i.inviterName, until: formatDateTime(i.expiresAt) })}
                  </span>
                </span>
                <button type="button" disabled={busy} onClick={() => void revoke(i)}>
                  {t("workspaces.revoke", { email: i.email })}
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
              <label htmlFor={`${id}-email`}>{t("workspaces.inviteByEmail")}</label>
              <input id={`${id}-email`} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} aria-describedby={`${id}-hint`} />
            </div>
            <div className="field field-inline">
              <label htmlFor={`${id}-role`}>{t("workspaces.as")}</label>
              <select id={`${id}-role`} value={role} onChange={(e) => setRole(e.target.value as Role)}>
                <option value="member">{roleLabel("member")}</option>
                <option value="admin">{roleLabel("admin")}</option>
              </select>
            </div>
            <button type="submit" disabled={busy}>
              {busy ? t("workspaces.inviting") : t("workspaces.invite")}
            </button>
          </form>
          <p className="hint" id={`${id}-hint`}>
            {t("workspaces.inviteHint")}
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
      notify(t("workspaces.joined", { workspace: workspace.name, role: workspace.role === "admin" ? "admin" : "member" }));
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
      <h2>{t("workspaces.forYou")}</h2>
      <ul className="plain-list">
        {invitations.data?.items.map((i) => (
          <li key={i.id} className="row">
            <span>
              {i.workspaceName} <span className="muted">· {t("workspaces.asFrom", { role: i.role ?? "member", inviter: i.inviterName })}</span>
            </span>
            <button type="button" className="primary" disabled={busy} onClick={() => void accept(i)}>
              {t("auth.join", { workspace: i.workspaceName })}
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
      notify(t("workspaces.renamed", { name: renamed.name }));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form className="row" onSubmit={rename}>
      <label htmlFor={`${id}-rename`}>{t("workspaces.newName", { workspace: workspace.name })}</label>
      <input id={`${id}-rename`} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      <button type="submit" disabled={name.trim() === workspace.name}>
        {t("workspaces.rename")}
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
      notify(t("workspaces.created", { name: ws.name }));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{t("nav.workspaces")}</h1>
          <p className="muted">{t("workspaces.intro")}</p>
        </div>
      </div>
      <InvitationsForYou />
      {workspaces.length === 0 && <Loading what={t("workspaces.loading")} />}
      <ul className="workspaces">
        {workspaces.map((ws) => (
          <li key={ws.id} className={`card workspace${ws.id === current?.id ? " current" : ""}`}>
            <div className="webhook-head">
              <div>
                <h2>
                  {ws.name} {ws.id === current?.id && <span className="badge badge-published">{t("workspaces.current")}</span>}
                </h2>
                <p className="muted">
                  {ws.personal ? t("workspaces.personal") : ws.owned ? t("workspaces.owned") : t("workspaces.shared")} ·{" "}
                  {t("workspaces.yourRole", { role: ws.role ?? "member", created: formatDateTime(ws.createdAt) })}
                </p>
                <dl className="facts">
                  <div>
                    <dt>{t("admin.plan")}</dt>
                    <dd>{t("workspaces.planName", { plan: ws.plan })}</dd>
                  </div>
                  <div>
                    <dt>{t("workspaces.twoFactor")}</dt>
                    <dd>{ws.requireTwoFactor ? t("workspaces.twoFactorRequired") : t("workspaces.twoFactorFree")}</dd>
                  </div>
                  <div>
                    <dt>{t("workspaces.removeBranding")}</dt>
                    <dd>{ws.entitlements.removeBranding ? t("workspaces.brandingIncluded") : t("workspaces.brandingNotIncluded")}</dd>
                  </div>
                </dl>
                {ws.role === "owner" && <TwoFactorRequirement workspace={ws} />}
                {ws.plan !== "pro" && (
                  <p className="hint">
                    {tRich("workspaces.planHint", { command: <code>npm run -s cli -- workspace:set-plan --workspace {ws.id} --plan pro</code> })}
                  </p>
                )}
              </div>
              {ws.id !== current?.id && (
                <button
                  type="button"
                  onClick={() => {
                    selectWorkspace(ws.id);
                    notify(t("layout.switchedTo", { name: ws.name }), "info");
                  }}
                >
                  {t("workspaces.switchTo", { name: ws.name })}
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
        <h2>{t("workspaces.new")}</h2>
        <div className="field">
          <label htmlFor={`${id}-name`}>{t("workspaces.name")}</label>
          <input id={`${id}-name`} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        {error && <InlineMessage kind="error">{error}</InlineMessage>}
        <div className="actions">
          <button type="submit" className="primary">
            {t("workspaces.create")}
          </button>
        </div>
      </form>
    </div>
  );
}
