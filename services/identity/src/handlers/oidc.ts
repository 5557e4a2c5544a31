// OpenID Connect sign-in (the gateway runs the browser's flow and verifies the provider's answer; identity finds or
// makes the account) and workspaces' auto-join domains, which let the people of an email domain join on their
// first sign-in through OIDC. A provider's (issuer, subject) is linked to one account, so a later sign-in finds it
// whatever email the provider has by then; before the link exists, only an address the provider verified matches.
import { Code, ConnectError } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { emailDomainPattern, openSignUp } from "@formsvc/platform/config.ts";
import type { SignInWithOidcRequest } from "@formsvc/proto/identity/v1/identity_pb.js";
import { signUpRefusal } from "../sign-up-policy.ts";
import { UserEntity, type User } from "../entities/user.ts";
import { WorkspaceEntity } from "../entities/workspace.ts";
import { maxNameLength, normaliseEmail, toUserMessage, validateEmail, type IdentityContext, type IdentityHandlers } from "./context.ts";

/** The most auto-join domains one workspace has. */
export const maxAutoJoinDomains = 20;
/** OpenID Connect's limit on `sub`; an issuer is a URL, held to a sensible length. */
const maxSubjectLength = 255;
const maxIssuerLength = 500;

type OidcHandlers = Pick<IdentityHandlers, "signInWithOidc" | "getAutoJoinDomains" | "setAutoJoinDomains">;

const domainOf = (email: string) => email.slice(email.lastIndexOf("@") + 1);

export function oidcHandlers(c: IdentityContext): OidcHandlers {
  const { deps, now, fork, schemaTable, usableLink, inTransaction, newUser, addMembership, admitAccount, firstAccountAdministers, managedWorkspace, workspaceAs } = c;
  const identities = schemaTable("oidc_identities");
  const autoJoin = schemaTable("workspace_auto_join_domains");

  /**
   * Whether `email` is invited, in a standing way or by name: a workspace's auto-join domain is the address's, or
   * an invitation to it is pending. Either admits a new account as an invitation's link would under SIGNUP.
   */
  async function invited(em: EntityManager, email: string): Promise<boolean> {
    const usable = usableLink(now());
    const [row] = await em.execute<{ invited: boolean }[]>(
      `select exists (select 1 from ${autoJoin} where "domain" = ?)
           or exists (select 1 from ${c.linksTable} l where l."purpose" = 'invitation' and l."email" = ? and ${usable.sql}) as "invited"`,
      [domainOf(email), email, ...usable.params],
    );
    return Boolean(row?.invited);
  }

  /** Adds `user` as a member of every workspace whose auto-join domains hold `email`'s; the ids of those joined. */
  async function joinByDomain(em: EntityManager, user: User, email: string): Promise<string[]> {
    const rows = await em.execute<{ workspace_id: string }[]>(`select "workspace_id" from ${autoJoin} where "domain" = ? order by "workspace_id"`, [domainOf(email)]);
    const workspaces = rows.length ? await em.find(WorkspaceEntity, { id: { $in: rows.map((r) => r.workspace_id) } }) : [];
    for (const workspace of workspaces) await addMembership(em, workspace, user, "member");
    return workspaces.map((w) => w.id);
  }

  async function signIn(req: SignInWithOidcRequest) {
    return inTransaction(async (em) => {
      const [link] = await em.execute<{ user_id: string }[]>(`select "user_id" from ${identities} where "issuer" = ? and "subject" = ?`, [req.issuer, req.subject]);
      const linked = link ? await em.findOne(UserEntity, { id: link.user_id }) : null;
      if (linked) return { user: toUserMessage(linked), created: false, joinedWorkspaceIds: [] };

      const email = normaliseEmail(req.email);
      if (!email) throw new ConnectError("the provider gave no email address: signing in needs one it has verified", Code.FailedPrecondition);
      validateEmail(email);
      // Anyone may type any address at a provider: only one it verified stands for its owner.
      if (!req.emailVerified) {
        throw new ConnectError(`the provider has not verified ${email} (email_verified is not true): verify it there, then sign in again`, Code.FailedPrecondition);
      }
      let user: User | null = await em.findOne(UserEntity, { email });
      const created = !user;
      if (user) {
        // One subject of an issuer per account: another one with this address (the provider reassigned it) is not its owner.
        const [other] = await em.execute<unknown[]>(`select 1 from ${identities} where "issuer" = ? and "user_id" = ?`, [req.issuer, user.id]);
        if (other) throw new ConnectError("this email's account signs in as another person at the provider", Code.PermissionDenied);
        // The provider vouches for the address.
        user.emailVerifiedAt ??= now();
      } else {
        admitAccount(email, (await invited(em, email)) ? "invitation" : "sign-up");
        const name = [...(req.name.trim() || email.slice(0, email.indexOf("@")))].slice(0, maxNameLength).join("");
        user = newUser(em, email, name, "free", null).user;
        user.emailVerifiedAt = now();
      }
      await em.flush();
      if (created) await firstAccountAdministers(em, user);
      await em.execute(`insert into ${identities} ("issuer", "subject", "user_id", "created_at") values (?, ?, ?, ?)`, [req.issuer, req.subject, user.id, now()], "run");
      const joinedWorkspaceIds = await joinByDomain(em, user, email);
      return { user: toUserMessage(user), created, joinedWorkspaceIds };
    }, false);
  }

  return {
    async signInWithOidc(req) {
      if (!req.issuer || !req.subject || req.issuer.length > maxIssuerLength || req.subject.length > maxSubjectLength) {
        throw new ConnectError(`issuer (at most ${maxIssuerLength} characters) and subject (at most ${maxSubjectLength}) are required`, Code.InvalidArgument);
      }
      try {
        return await signIn(req);
      } catch (err) {
        // Two first sign-ins of one person at once: the other made the link (or the account); this one finds it.
        if (err instanceof UniqueConstraintViolationException) return signIn(req);
        throw err;
      }
    },

    async getAutoJoinDomains(req, ctx) {
      const em = fork();
      const workspace = await managedWorkspace(em, ctx, req.workspaceId);
      const rows = await em.execute<{ domain: string }[]>(`select "domain" from ${autoJoin} where "workspace_id" = ? order by "domain"`, [workspace.id]);
      return { domains: rows.map((r) => r.domain) };
    },

    async setAutoJoinDomains(req, ctx) {
      const domains = [...new Set(req.domains.map((d) => d.trim().toLowerCase().replace(/^@/, "")).filter(Boolean))].sort();
      if (domains.length > maxAutoJoinDomains) throw new ConnectError(`at most ${maxAutoJoinDomains} auto-join domains`, Code.InvalidArgument);
      for (const domain of domains) {
        if (domain.length > 253 || !emailDomainPattern.test(domain)) {
          throw new ConnectError(`"${domain}" is not an email domain: give domains such as example.com (exactly that one, no subdomains)`, Code.InvalidArgument);
        }
        // A standing invitation to a domain: SIGNUP admits its people as it admits invitations.
        const refusal = signUpRefusal(deps.signUp ?? openSignUp, `someone@${domain}`, "invitation");
        if (refusal) throw new ConnectError(`auto-join domains follow SIGNUP: ${refusal}`, Code.PermissionDenied);
      }
      const em = fork();
      const workspace = await workspaceAs(em, ctx, req.workspaceId, ["owner"], () => new ConnectError("only the workspace's owner sets its auto-join domains", Code.PermissionDenied));
      await inTransaction(async (tx) => {
        await tx.execute(`delete from ${autoJoin} where "workspace_id" = ?`, [workspace.id], "run");
        for (const domain of domains) {
          await tx.execute(`insert into ${autoJoin} ("workspace_id", "domain", "created_at") values (?, ?, ?)`, [workspace.id, domain, now()], "run");
        }
      }, false);
      return { domains };
    },
  };
}
