// The web app's API, mounted at /app/api: session-authenticated JSON endpoints over the same services as
// /api/v1 (never /api/v1 itself, never a key). Errors are `{"error"}` with the one status table.
//
//   GET  /session                      {user|null, csrfToken}
//   POST /auth/signup | /auth/signin   sets the session cookie       POST /auth/signout
//   POST /session/sign-out-all         ends every session of the signed-in person (signs out everywhere)
//   GET|POST /workspaces               GET|POST /workspaces/:id/members   POST /workspaces/:id/invites
//   PATCH|DELETE /workspaces/:id/members/:userId  {role} / removes   PUT /workspaces/:id/plan (the owner)
//   POST /invitations/lookup {token}   POST /invitations/accept {token, name?, password?}: signs up (or adds the signed-in person)
//   GET|POST /forms (?workspaceId, ?trashed=true)                   GET|PATCH /forms/:id
//   POST /forms/:id/{publish,close,reopen,trash,restore}            GET /forms/:id/questions
//   GET  /forms/:id/preview            the hosted page of the form as it is now (drafts too), answers not saved
//   GET  /forms/:id/submissions        (?filter, ?page, ?limit)    GET|DELETE /forms/:id/submissions/:sid
//   GET  /forms/:id/submissions.csv    (?filter)
//   GET  /forms/:id/storage            {files, bytes, quotaBytes}: what the form's responses hold
//   GET  /forms/:id/calculated-field-problems  {items: [{field, reason, count, lastAt}]}: fields that stored null
//   GET|POST /forms/:id/webhooks       PATCH|DELETE /webhooks/:id   POST /webhooks/:id/test
//   GET  /webhooks/:id/deliveries      GET /webhooks/:id/deliveries/:did/attempts
//   POST /webhooks/:id/deliveries/:did/retry
//   GET|POST /api-keys                 DELETE /api-keys/:id
// Every request that changes something needs the CSRF header (see security.ts).
import type { JsonObject } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import express, { type Request, type Response, type Router } from "express";
import { z } from "zod";
import { apiKeyJson, attemptJson, deliveryJson, formJson, questionJson, submissionJson, userJson, webhookJson, workspaceJson } from "@formsvc/api-records";
import { createFormBodySchema, resolveSettings, updateFormBodySchema } from "@formsvc/form-document";
import { asCaller } from "@formsvc/platform/caller.ts";
import { maxPageSize } from "@formsvc/platform/paging.ts";
import { FormStatus, type Form } from "@formsvc/proto/forms/v1/forms_pb.js";
import { Plan, Role, type Member, type User, type Workspace } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { Submission } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { parse as parseInput } from "../api/route-table.ts";
import { submissionFilterQuerySchema, submissionFilters } from "../api/routes/submissions.ts";
import { webhookEventTypesSchema, webhookHeadersSchema, webhookSecretSchema } from "../api/routes/webhooks.ts";
import { pagingQuerySchema, recordIdSchema } from "../api/schemas.ts";
import type { GatewayDeps } from "../app.ts";
import { documentOf } from "../hosted/form-fields.ts";
import { renderFormPage, renderThankYouPage } from "../hosted/render-form.ts";
import { HttpError, jsonNotFound } from "../http-errors.ts";
import { pathId, unsafeInputGuard } from "../input-safety.ts";
import { rateLimit } from "../rate-limit/rate-limit-middleware.ts";
import { admitAttempt, passwordResetLimits, signInLimits, signUpLimits } from "./attempt-limits.ts";
import { responseColumns, responsesCsv } from "./csv.ts";
import { displayValue, optionTexts, type AnswerJson } from "./display.ts";
import {
  clearSessionCookie,
  cookiePolicy,
  ensureCsrfCookie,
  issueCsrfToken,
  refuseRepeatedCookies,
  requireCsrf,
  requireSession,
  sessionTokenOf,
  sessionUser,
  setSessionCookie,
} from "./security.ts";

export type AppApiDeps = Pick<GatewayDeps, "identity" | "forms" | "submissions" | "webhooks" | "delivery" | "fileLinks" | "publicUrl"> & {
  rateLimits: Pick<GatewayDeps["rateLimits"], "store" | "perIp">;
};

/** Rows the CSV export reads at most. */
const maxCsvRows = 50_000;

const wrongCredentials = "email or password is wrong";

// --- request schemas ------------------------------------------------------------------------------

const email = z.string().trim().min(1, "is required").max(254);
const signUpSchema = z.strictObject({
  email,
  name: z.string().max(100).optional(),
  password: z.string().min(1, "is required").max(1000),
});
const signInSchema = z.strictObject({ email, password: z.string().min(1, "is required").max(1000) });
const passwordResetRequestSchema = z.strictObject({ email });
const token = z.string().trim().min(1, "is required").max(200);
const passwordResetSchema = z.strictObject({ token, password: z.string().min(1, "is required").max(1000) });
const verifyEmailSchema = z.strictObject({ token });
const nameSchema = z.strictObject({ name: z.string().trim().min(1, "is required").max(100) });
const roleSchema = z.enum(["admin", "member"]);
const inviteSchema = z.strictObject({ email, role: roleSchema.optional() });
const memberRoleSchema = z.strictObject({ role: roleSchema });
const planSchema = z.strictObject({ plan: z.enum(["free", "pro"]) });
const invitationSchema = z.strictObject({ token });
const acceptInvitationSchema = z.strictObject({ token, name: z.string().max(100).optional(), password: z.string().max(1000).optional() });
const listFormsQuery = pagingQuerySchema.extend({
  workspaceId: recordIdSchema.optional(),
  trashed: z.enum(["true", "false"]).optional(),
  limit: pagingQuerySchema.shape.limit.unwrap().default(maxPageSize),
});
const createWebhookSchema = z.strictObject({
  url: z.string().trim().min(1, "is required").max(2000),
  secret: webhookSecretSchema.optional(),
  headers: webhookHeadersSchema.optional(),
  eventTypes: webhookEventTypesSchema.optional(),
  enabled: z.boolean().optional(),
});
const updateWebhookSchema = z.strictObject({
  url: z.string().trim().min(1, "is required").max(2000).optional(),
  secret: webhookSecretSchema.nullable().optional(),
  headers: webhookHeadersSchema.optional(),
  eventTypes: webhookEventTypesSchema.optional(),
  enabled: z.boolean().optional(),
});

/** The API's parse, with a missing body or query taken as empty. */
const parse = <T extends z.ZodType>(schema: T, value: unknown, where: string) => parseInput(schema, value ?? {}, where);

// --- record shapes --------------------------------------------------------------------------------

function appFormJson(form: Form) {
  return { ...formJson(form), trashedAt: form.trashedAt ? timestampDate(form.trashedAt).toISOString() : null };
}

const roleNames: Record<Role, string | null> = { [Role.UNSPECIFIED]: null, [Role.OWNER]: "owner", [Role.ADMIN]: "admin", [Role.MEMBER]: "member" };

/** A workspace as the app shows it: with its owner and the signed-in person's role in it. */
function appWorkspaceJson(ws: Workspace, user: User) {
  return { ...workspaceJson(ws), ownerId: ws.ownerId, owned: ws.ownerId === user.id, role: roleNames[ws.role] };
}
const roleOf = (name: "admin" | "member" | undefined) => (name === "admin" ? Role.ADMIN : Role.MEMBER);

function memberJson(m: Member) {
  return { user: userJson(m.user!), role: roleNames[m.role], joinedAt: m.joinedAt ? timestampDate(m.joinedAt).toISOString() : null };
}

export function appRouter(deps: AppApiDeps): Router {
  const router = express.Router();
  const policy = cookiePolicy(deps.publicUrl);
  const { store, perIp } = deps.rateLimits;
  const address = (req: Request) => req.ip ?? "unknown";
  const userOf = (res: Response) => res.locals.user as User;
  const as = (res: Response) => asCaller(userOf(res).id);
  const signedIn = requireSession(deps.identity, policy);
  const json = express.json({ limit: "1mb" });

  router.use(rateLimit(store, "address", perIp, (_res, req) => address(req)));
  router.use(refuseRepeatedCookies(policy));

  // The preview's own answers go nowhere: these take a post from the previewed page and keep nothing.
  // They change nothing, so they need neither a session nor the CSRF header.
  const preview = express.Router();
  preview.post("/:pid/responses", json, (req, res) => {
    res.json({ responseId: "preview", completed: Boolean((req.body as { completed?: unknown } | undefined)?.completed) });
  });
  preview.post("/:pid/uploads", (req, res) => {
    req.resume();
    req.on("end", () => res.json({ uploadId: "preview", name: "file", size: 0, contentType: "application/octet-stream" }));
  });
  preview.post("/:pid", (_req, res) => {
    previewHeaders(res);
    res.type("html").send(renderThankYouPage({ name: "Preview", document: { blocks: [] }, showBranding: false, brandingUrl: "/" }));
  });
  router.use("/preview", preview);

  router.use(ensureCsrfCookie(policy), requireCsrf(policy));
  router.use((req, _res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD" && Number(req.get("content-length") ?? 0) > 0 && !req.is("application/json")) {
      throw new HttpError(415, "Content-Type must be application/json");
    }
    next();
  });
  router.use(json, unsafeInputGuard);

  // --- session ------------------------------------------------------------------------------------

  router.get("/session", async (req, res) => {
    const user = await sessionUser(deps.identity, req, res, policy);
    res.setHeader("Cache-Control", "no-store");
    res.json({ user: user ? { ...userJson(user), emailVerified: user.emailVerified } : null, csrfToken: res.locals.csrfToken });
  });

  async function startSession(res: Response, user: User) {
    const { token, expiresAt } = await deps.identity.createSession({ userId: user.id });
    setSessionCookie(res, policy, token, expiresAt ? timestampDate(expiresAt) : new Date(Date.now() + 30 * 86400_000));
    // A new CSRF token with every new session.
    const csrfToken = issueCsrfToken(res, policy);
    res.setHeader("Cache-Control", "no-store");
    return { user: userJson(user), csrfToken };
  }

  router.post("/auth/signup", async (req, res) => {
    const body = parse(signUpSchema, req.body, "body");
    await admitAttempt(store, signUpLimits, { address: address(req), email: "" });
    const { user } = await deps.identity.signUp({ email: body.email, name: body.name ?? "", password: body.password });
    res.status(201).json(await startSession(res, user!));
  });

  router.post("/auth/signin", async (req, res) => {
    const body = parse(signInSchema, req.body, "body");
    await admitAttempt(store, signInLimits, { address: address(req), email: body.email.toLowerCase() });
    let user: User | undefined;
    try {
      user = (await deps.identity.verifyPassword({ email: body.email, password: body.password })).user;
    } catch (err) {
      if (ConnectError.from(err).code === Code.Unauthenticated) throw new HttpError(401, wrongCredentials);
      throw err;
    }
    res.json(await startSession(res, user!));
  });

  // Always the same 202: whether anyone has this email is not told (the mail tells its owner).
  router.post("/auth/password-reset", async (req, res) => {
    const body = parse(passwordResetRequestSchema, req.body, "body");
    await admitAttempt(store, passwordResetLimits, { address: address(req), email: body.email.toLowerCase() });
    await deps.identity.requestPasswordReset({ email: body.email });
    res.status(202).json({ message: "if an account has this email, a link to set a new password is on its way" });
  });

  // The mailed link's page sends its token and the new password; the person is signed in with it.
  router.post("/auth/password-reset/complete", async (req, res) => {
    const body = parse(passwordResetSchema, req.body, "body");
    await admitAttempt(store, signUpLimits, { address: address(req), email: "" });
    const { user } = await deps.identity.resetPassword({ token: body.token, password: body.password });
    res.json(await startSession(res, user!));
  });

  router.post("/auth/verify-email", async (req, res) => {
    const body = parse(verifyEmailSchema, req.body, "body");
    await admitAttempt(store, signUpLimits, { address: address(req), email: "" });
    const { user } = await deps.identity.verifyEmail({ token: body.token });
    res.setHeader("Cache-Control", "no-store");
    res.json({ user: { ...userJson(user!), emailVerified: user!.emailVerified } });
  });

  router.post("/auth/signout", async (req, res) => {
    const token = sessionTokenOf(req, policy);
    if (token) await deps.identity.deleteSession({ token });
    clearSessionCookie(res, policy);
    issueCsrfToken(res, policy);
    res.status(204).end();
  });

  // Signs out everywhere: every session of the person ends, this browser's too.
  router.post("/session/sign-out-all", signedIn, async (_req, res) => {
    const { deleted } = await deps.identity.deleteUserSessions({}, as(res));
    clearSessionCookie(res, policy);
    issueCsrfToken(res, policy);
    res.setHeader("Cache-Control", "no-store");
    res.json({ signedOutSessions: deleted });
  });

  // The mailed invitation's page: what it invites to, then accepting it (signed in as the invited email,
  // or signing up with a name and password, which starts a session). Tokens travel in bodies, never URLs
  // the gateway logs.
  router.post("/invitations/lookup", async (req, res) => {
    const body = parse(invitationSchema, req.body, "body");
    await admitAttempt(store, signUpLimits, { address: address(req), email: "" });
    const invitation = await deps.identity.getInvitation({ token: body.token });
    res.setHeader("Cache-Control", "no-store");
    res.json({
      email: invitation.email,
      workspaceName: invitation.workspaceName,
      inviterName: invitation.inviterName,
      role: roleNames[invitation.role],
      accountExists: invitation.accountExists,
    });
  });

  router.post("/invitations/accept", async (req, res) => {
    const body = parse(acceptInvitationSchema, req.body, "body");
    await admitAttempt(store, signUpLimits, { address: address(req), email: "" });
    const user = await sessionUser(deps.identity, req, res, policy);
    const token = body.token;
    if (user) {
      const { workspace } = await deps.identity.acceptInvitation({ token }, asCaller(user.id));
      res.json({ user: userJson(user), workspace: appWorkspaceJson(workspace!, user) });
      return;
    }
    if (!body.password) throw new HttpError(400, "body.password: is required");
    const accepted = await deps.identity.acceptInvitation({ token, name: body.name ?? "", password: body.password });
    res.status(201).json({ ...(await startSession(res, accepted.user!)), workspace: appWorkspaceJson(accepted.workspace!, accepted.user!) });
  });

  // Everything below needs a session.
  router.use(signedIn);

  // --- workspaces ---------------------------------------------------------------------------------

  router.get("/workspaces", async (_req, res) => {
    const { workspaces } = await deps.identity.listWorkspaces({ limit: 0 }, as(res));
    res.json({ items: workspaces.map((w) => appWorkspaceJson(w, userOf(res))) });
  });

  router.post("/workspaces", async (req, res) => {
    const body = parse(nameSchema, req.body, "body");
    const { workspace } = await deps.identity.createWorkspace({ name: body.name }, as(res));
    res.status(201).json(appWorkspaceJson(workspace!, userOf(res)));
  });

  router.get("/workspaces/:id/members", async (req, res) => {
    const { members } = await deps.identity.listMembers({ workspaceId: pathId(req, "id") }, as(res));
    res.json({ items: members.map(memberJson) });
  });

  router.post("/workspaces/:id/members", async (req, res) => {
    const body = parse(inviteSchema, req.body, "body");
    try {
      const { user } = await deps.identity.addMember({ workspaceId: pathId(req, "id"), email: body.email, role: roleOf(body.role) }, as(res));
      res.status(201).json({ user: userJson(user!) });
    } catch (err) {
      const e = ConnectError.from(err);
      if (e.code === Code.NotFound && e.rawMessage === "user not found") {
        throw new HttpError(404, "nobody has signed up with this email yet: invite them by email (POST /workspaces/:id/invites)");
      }
      throw err;
    }
  });

  // Adds an existing account at once (201, {user}); mails anyone else a link to sign up into the workspace (202).
  router.post("/workspaces/:id/invites", async (req, res) => {
    const body = parse(inviteSchema, req.body, "body");
    const { user, invited } = await deps.identity.inviteMember({ workspaceId: pathId(req, "id"), email: body.email, role: roleOf(body.role) }, as(res));
    if (invited) res.status(202).json({ invited: true, email: body.email.toLowerCase() });
    else res.status(201).json({ invited: false, user: userJson(user!) });
  });

  router.patch("/workspaces/:id/members/:userId", async (req, res) => {
    const body = parse(memberRoleSchema, req.body, "body");
    const { member } = await deps.identity.setMemberRole({ workspaceId: pathId(req, "id"), userId: pathId(req, "userId"), role: roleOf(body.role) }, as(res));
    res.json(memberJson(member!));
  });

  router.delete("/workspaces/:id/members/:userId", async (req, res) => {
    await deps.identity.removeMember({ workspaceId: pathId(req, "id"), userId: pathId(req, "userId") }, as(res));
    res.status(204).end();
  });

  router.put("/workspaces/:id/plan", async (req, res) => {
    const body = parse(planSchema, req.body, "body");
    const { workspace } = await deps.identity.setPlan({ workspaceId: pathId(req, "id"), plan: body.plan === "pro" ? Plan.PRO : Plan.FREE }, as(res));
    res.json(appWorkspaceJson(workspace!, userOf(res)));
  });

  // --- forms --------------------------------------------------------------------------------------

  router.get("/forms", async (req, res) => {
    const query = parse(listFormsQuery, req.query, "query");
    const { forms, hasMore } = await deps.forms.listForms(
      { workspaceId: query.workspaceId ?? "", trashed: query.trashed === "true", page: query.page, limit: query.limit },
      as(res),
    );
    res.json({ items: forms.map(appFormJson), page: query.page, limit: query.limit, hasMore });
  });

  router.post("/forms", async (req, res) => {
    const body = parse(createFormBodySchema, req.body, "body");
    const { form } = await deps.forms.createForm(
      { workspaceId: body.workspaceId, name: body.name, document: body.document as JsonObject | undefined },
      as(res),
    );
    res.status(201).json(appFormJson(form!));
  });

  router.get("/forms/:id", async (req, res) => {
    res.json(appFormJson((await deps.forms.getForm({ id: pathId(req, "id") }, as(res))).form!));
  });

  router.patch("/forms/:id", async (req, res) => {
    const body = parse(updateFormBodySchema, req.body, "body");
    const { form } = await deps.forms.updateForm(
      {
        id: pathId(req, "id"),
        name: body.name,
        document: body.document as JsonObject | undefined,
        settings: body.settings as JsonObject | undefined,
      },
      as(res),
    );
    res.json(appFormJson(form!));
  });

  const statusActions: Record<string, FormStatus> = { publish: FormStatus.PUBLISHED, close: FormStatus.CLOSED, reopen: FormStatus.PUBLISHED };
  for (const [action, status] of Object.entries(statusActions)) {
    router.post(`/forms/:id/${action}`, async (req, res) => {
      const id = pathId(req, "id");
      if (action === "reopen") {
        // Reopen is for closed forms only; publishing a draft is Publish.
        const { form } = await deps.forms.getForm({ id }, as(res));
        if (form?.status !== FormStatus.CLOSED) throw new HttpError(409, "only a closed form can be reopened");
      }
      const { form } = await deps.forms.setFormStatus({ id, status }, as(res));
      res.json(appFormJson(form!));
    });
  }

  router.post("/forms/:id/trash", async (req, res) => {
    await deps.forms.trashForm({ id: pathId(req, "id") }, as(res));
    res.status(204).end();
  });

  router.post("/forms/:id/restore", async (req, res) => {
    res.json(appFormJson((await deps.forms.restoreForm({ id: pathId(req, "id") }, as(res))).form!));
  });

  router.get("/forms/:id/questions", async (req, res) => {
    const { questions } = await deps.forms.listQuestions({ formId: pathId(req, "id") }, as(res));
    res.json({ items: questions.map(questionJson) });
  });

  router.get("/forms/:id/preview", async (req, res) => {
    const { form } = await deps.forms.getForm({ id: pathId(req, "id") }, as(res));
    const settings = resolveSettings(form!.settings);
    const html = renderFormPage({
      formId: `preview-${form!.id}`,
      name: form!.name,
      version: form!.version,
      document: documentOf(form!.document),
      // A preview never redirects away from the app, and does not keep answers between visits.
      settings: { ...settings, redirectUrl: null, saveProgress: false },
      showBranding: settings.branding,
      hidden: {},
      urls: { base: `${req.baseUrl}/preview`, script: "/f/assets/form-page.js", branding: "/" },
    });
    previewHeaders(res);
    res.type("html").send(html);
  });

  // --- responses ----------------------------------------------------------------------------------

  /**
   * Each version of a form (its document, null when it cannot be read, and its option texts), read once
   * per request (after the caller's access was checked).
   */
  function formVersions(formId: string) {
    const cache = new Map<number, Promise<{ document: unknown; options: Map<string, string> }>>();
    return (version: number) => {
      let found = cache.get(version);
      if (!found) {
        found = deps.forms
          .getFormVersion({ formId, version })
          .then((v) => v.document ?? null)
          .catch(() => null)
          .then((document) => ({ document, options: optionTexts(document) }));
        cache.set(version, found);
      }
      return found;
    };
  }

  async function presentSubmissions(subs: Submission[], versionOf: ReturnType<typeof formVersions>) {
    return Promise.all(
      subs.map(async (sub) => {
        const json = submissionJson(sub, (fileId) => deps.fileLinks.sign(fileId));
        const { options } = await versionOf(sub.version);
        const answers: Record<string, AnswerJson & { display: string }> = {};
        for (const [key, answer] of Object.entries(json.answers as Record<string, AnswerJson>)) {
          answers[key] = { ...answer, display: displayValue(answer, options) };
        }
        return { ...json, answers };
      }),
    );
  }

  router.get("/forms/:id/submissions", async (req, res) => {
    const formId = pathId(req, "id");
    const query = { ...parse(pagingQuerySchema, req.query, "query"), ...parse(submissionFilterQuerySchema, req.query, "query") };
    const { submissions, hasMore } = await deps.submissions.listSubmissions(
      { formId, filter: submissionFilters[query.filter], page: query.page, limit: query.limit },
      as(res),
    );
    res.json({ items: await presentSubmissions(submissions, formVersions(formId)), page: query.page, limit: query.limit, hasMore });
  });

  router.get("/forms/:id/submissions.csv", async (req, res) => {
    const formId = pathId(req, "id");
    const { filter } = parse(submissionFilterQuerySchema, req.query, "query");
    const [{ form }, { questions }] = await Promise.all([deps.forms.getForm({ id: formId }, as(res)), deps.forms.listQuestions({ formId }, as(res))]);
    const all: Submission[] = [];
    for (let page = 1; all.length < maxCsvRows; page++) {
      const { submissions, hasMore } = await deps.submissions.listSubmissions(
        { formId, filter: submissionFilters[filter], page, limit: maxPageSize },
        as(res),
      );
      all.push(...submissions);
      if (!hasMore) break;
    }
    const rows = all.slice(0, maxCsvRows).map((s) => submissionJson(s, (fileId) => deps.fileLinks.sign(fileId)));
    const versionOf = formVersions(formId);
    const options = new Map<number, Map<string, string>>();
    for (const version of new Set(rows.map((r) => r.version))) options.set(version, (await versionOf(version)).options);
    const typed = rows as unknown as Parameters<typeof responsesCsv>[1];
    const csv = responsesCsv(responseColumns(questions, typed), typed, (v) => options.get(v) ?? new Map());
    const fileName = `${(form!.name || "responses").replace(/[^\w.-]+/g, "_").slice(0, 80)}-responses.csv`;
    res.setHeader("Content-Type", "text/csv; charset=utf-8");
    res.setHeader("Content-Disposition", `attachment; filename="${fileName}"`);
    res.setHeader("Cache-Control", "no-store");
    res.send(csv);
  });

  router.get("/forms/:id/submissions/:sid", async (req, res) => {
    const formId = pathId(req, "id");
    const { submission } = await deps.submissions.getSubmission({ formId, submissionId: pathId(req, "sid") }, as(res));
    const versionOf = formVersions(formId);
    const [presented] = await presentSubmissions([submission!], versionOf);
    res.json({ submission: presented, document: (await versionOf(submission!.version)).document });
  });

  router.get("/forms/:id/storage", async (req, res) => {
    const held = await deps.submissions.getFormStorage({ formId: pathId(req, "id") }, as(res));
    res.json({ files: Number(held.files), bytes: Number(held.bytes), quotaBytes: Number(held.quotaBytes) });
  });

  router.get("/forms/:id/calculated-field-problems", async (req, res) => {
    const { problems } = await deps.submissions.listCalculatedFieldProblems({ formId: pathId(req, "id") }, as(res));
    res.json({
      items: problems.map((p) => ({ field: p.field, reason: p.reason, count: Number(p.count), lastAt: p.lastAt ? timestampDate(p.lastAt).toISOString() : null })),
    });
  });

  router.delete("/forms/:id/submissions/:sid", async (req, res) => {
    await deps.submissions.deleteSubmission({ formId: pathId(req, "id"), submissionId: pathId(req, "sid") }, as(res));
    res.status(204).end();
  });

  // --- webhooks and deliveries --------------------------------------------------------------------

  router.get("/forms/:id/webhooks", async (req, res) => {
    const { webhooks } = await deps.webhooks.listWebhooks({ formId: pathId(req, "id"), page: 1, limit: maxPageSize }, as(res));
    res.json({ items: webhooks.map(webhookJson) });
  });

  router.post("/forms/:id/webhooks", async (req, res) => {
    const body = parse(createWebhookSchema, req.body, "body");
    const { webhook } = await deps.webhooks.createWebhook(
      { formId: pathId(req, "id"), url: body.url, secret: body.secret ?? "", headers: body.headers ?? {}, eventTypes: body.eventTypes ?? [], enabled: body.enabled },
      as(res),
    );
    res.status(201).json(webhookJson(webhook!));
  });

  router.patch("/webhooks/:id", async (req, res) => {
    const body = parse(updateWebhookSchema, req.body, "body");
    const { webhook } = await deps.webhooks.updateWebhook(
      {
        id: pathId(req, "id"),
        url: body.url,
        secret: body.secret === null ? "" : body.secret,
        headers: body.headers ? { values: body.headers } : undefined,
        eventTypes: body.eventTypes ? { values: body.eventTypes } : undefined,
        enabled: body.enabled,
      },
      as(res),
    );
    res.json(webhookJson(webhook!));
  });

  router.delete("/webhooks/:id", async (req, res) => {
    await deps.webhooks.deleteWebhook({ id: pathId(req, "id") }, as(res));
    res.status(204).end();
  });

  router.post("/webhooks/:id/test", async (req, res) => {
    const { delivery } = await deps.delivery.sendTestEvent({ webhookId: pathId(req, "id") }, as(res));
    res.json(deliveryJson(delivery!));
  });

  router.get("/webhooks/:id/deliveries", async (req, res) => {
    const query = parse(pagingQuerySchema, req.query, "query");
    const { deliveries, hasMore } = await deps.delivery.listDeliveries(
      { webhookId: pathId(req, "id"), page: query.page, limit: query.limit },
      as(res),
    );
    res.json({ items: deliveries.map(deliveryJson), page: query.page, limit: query.limit, hasMore });
  });

  router.get("/webhooks/:id/deliveries/:did/attempts", async (req, res) => {
    const { attempts } = await deps.delivery.listAttempts({ webhookId: pathId(req, "id"), deliveryId: pathId(req, "did") }, as(res));
    res.json({ items: attempts.map(attemptJson) });
  });

  router.post("/webhooks/:id/deliveries/:did/retry", async (req, res) => {
    const { delivery } = await deps.delivery.retryDelivery({ webhookId: pathId(req, "id"), deliveryId: pathId(req, "did") }, as(res));
    res.json(deliveryJson(delivery!));
  });

  // --- API keys -----------------------------------------------------------------------------------

  router.get("/api-keys", async (_req, res) => {
    const { apiKeys } = await deps.identity.listApiKeys({}, as(res));
    res.json({ items: apiKeys.map(apiKeyJson) });
  });

  router.post("/api-keys", async (req, res) => {
    const body = parse(nameSchema, req.body, "body");
    const { apiKey, key } = await deps.identity.createApiKey({ name: body.name }, as(res));
    res.setHeader("Cache-Control", "no-store");
    res.status(201).json({ ...apiKeyJson(apiKey!), key });
  });

  router.delete("/api-keys/:id", async (req, res) => {
    await deps.identity.deleteApiKey({ id: pathId(req, "id") }, as(res));
    res.status(204).end();
  });

  router.use(jsonNotFound);
  return router;
}

/** The preview is shown in a frame of the app only, runs only our script, and is never stored. */
function previewHeaders(res: Response): void {
  res.setHeader(
    "Content-Security-Policy",
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'",
  );
  res.setHeader("X-Frame-Options", "SAMEORIGIN");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", "no-store");
}
