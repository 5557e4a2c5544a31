// Single-use links (issue 31): the owner's RPCs (CreateResponseLinks, ListResponseLinks, RevokeResponseLink),
// the hosted page's CheckResponseLink, and what SaveResponse asks of a form with settings.requireSingleUseLink.
// A token is 256 bits from a CSPRNG, answered once when minted; only its SHA-256 is stored, so the table
// leaks no usable link. It is used up in the transaction that completes its response.
import { createHash } from "node:crypto";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client, type ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/core";
import { maxLinksPerCall, refusals, type LinkProblem } from "@formsvc/form-document/response-rules";
import { asCaller, requireCaller } from "@formsvc/platform/caller.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ResponseLinkSchema, SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { refused } from "../refusal-error.ts";

/** Characters of a token (base62): about 256 bits. */
const tokenLength = 43;
/** Longest token a request may carry; anything longer is no token of ours. */
const maxTokenLength = 200;

interface LinkRow {
  id: string;
  form_id: string;
  created_at: Date;
  expires_at: Date | null;
  used_at: Date | null;
  response_id: string | null;
  revoked_at: Date | null;
}

const tableOf = (orm: MikroORM) => `"${orm.config.get("schema") ?? "public"}"."response_links"`;
const hashOf = (token: string) => createHash("sha256").update(token, "utf8").digest();

function linkMessage(row: LinkRow, token = ""): MessageInitShape<typeof ResponseLinkSchema> {
  const at = (date: Date | null) => (date ? timestampFromDate(new Date(date)) : undefined);
  return {
    id: row.id,
    formId: row.form_id,
    createdAt: at(row.created_at),
    expiresAt: at(row.expires_at),
    usedAt: at(row.used_at),
    responseId: row.response_id ?? "",
    revokedAt: at(row.revoked_at),
    token,
  };
}

/** Why a stored link does not open its form at `now`, if it does not. */
function problemOf(row: LinkRow | undefined, now: Date): LinkProblem | undefined {
  if (!row) return "linkUnknown";
  if (row.revoked_at) return "linkRevoked";
  if (row.used_at) return "linkUsed";
  if (row.expires_at && new Date(row.expires_at).getTime() <= now.getTime()) return "linkExpired";
  return undefined;
}

type LinkHandlers = Pick<ServiceImpl<typeof SubmissionsService>, "createResponseLinks" | "listResponseLinks" | "revokeResponseLink" | "checkResponseLink">;

export interface ResponseLinks {
  handlers: LinkHandlers;
  /** What a save of a form requiring links must carry: PERMISSION_DENIED naming the problem, unless `token` is usable now. */
  check(formId: string, token: string): Promise<void>;
  /**
   * Uses the token up for `responseId`, in the transaction completing it: the row's update is what binds,
   * so of two completions with one token, the second finds it used and is refused.
   */
  use(em: EntityManager, formId: string, token: string, responseId: string, at: Date): Promise<void>;
}

export function responseLinks(deps: { orm: MikroORM; forms: Client<typeof FormsService>; logger?: Logger; now?: () => Date }): ResponseLinks {
  const { orm, forms, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const table = tableOf(orm);
  const checkCallerForm = async (caller: string, formId: string) => {
    if (!formId) throw new ConnectError("form not found", Code.NotFound);
    await forms.getForm({ id: formId }, asCaller(caller)).catch((err: unknown) => upstreamFailure("forms", err, { logger }));
  };
  const find = async (formId: string, token: string): Promise<LinkRow | undefined> => {
    if (!token || token.length > maxTokenLength) return undefined;
    const [row] = (await orm.em
      .fork()
      .getConnection()
      .execute(`select * from ${table} where "token_hash" = ? and "form_id" = ?`, [hashOf(token), formId], "all")) as LinkRow[];
    return row;
  };

  return {
    async check(formId, token) {
      if (!token) throw refused("linkMissing");
      const problem = problemOf(await find(formId, token), now());
      if (problem) throw refused(problem);
    },

    async use(em, formId, token, responseId, at) {
      const rows = (await em.getConnection().execute(
        `update ${table} set "used_at" = ?, "response_id" = ?
          where "token_hash" = ? and "form_id" = ? and "used_at" is null and "revoked_at" is null and ("expires_at" is null or "expires_at" > ?)
          returning "id"`,
        [at, responseId, hashOf(token), formId, at],
        "all",
        em.getTransactionContext(),
      )) as { id: string }[];
      if (rows.length === 1) return;
      // Said precisely: the row as another transaction left it.
      throw refused(problemOf(await find(formId, token), at) ?? "linkUsed");
    },

    handlers: {
      async createResponseLinks(req, ctx) {
        await checkCallerForm(requireCaller(ctx), req.formId);
        if (!Number.isInteger(req.count) || req.count < 1 || req.count > maxLinksPerCall) {
          throw new ConnectError(`count: must be a whole number from 1 to ${maxLinksPerCall}`, Code.InvalidArgument);
        }
        const at = now();
        const expiresAt = req.expiresAt ? timestampDate(req.expiresAt) : null;
        if (expiresAt && expiresAt.getTime() <= at.getTime()) throw new ConnectError("expiresAt: must be in the future", Code.InvalidArgument);
        const made = Array.from({ length: req.count }, () => ({ id: newId(), token: newId(tokenLength) }));
        // One statement for them all: a thousand links are one round trip.
        const rows = (await orm.em.fork().getConnection().execute(
          `insert into ${table} ("id", "form_id", "token_hash", "created_at", "expires_at")
           select l."id", ?, decode(l."hash", 'hex'), ?, ? from jsonb_to_recordset(?::jsonb) as l("id" text, "hash" text)
           returning *`,
          [req.formId, at, expiresAt, JSON.stringify(made.map((l) => ({ id: l.id, hash: hashOf(l.token).toString("hex") })))],
          "all",
        )) as LinkRow[];
        const tokens = new Map(made.map((l) => [l.id, l.token]));
        return { links: made.map((l) => linkMessage(rows.find((r) => r.id === l.id)!, tokens.get(l.id))) };
      },

      async listResponseLinks(req, ctx) {
        await checkCallerForm(requireCaller(ctx), req.formId);
        const rows = (await orm.em
          .fork()
          .getConnection()
          .execute(`select * from ${table} where "form_id" = ? order by "created_at" desc, "id"`, [req.formId], "all")) as LinkRow[];
        return { links: rows.map((row) => linkMessage(row)) };
      },

      async revokeResponseLink(req, ctx) {
        await checkCallerForm(requireCaller(ctx), req.formId);
        const [row] = (await orm.em.fork().getConnection().execute(
          `update ${table} set "revoked_at" = coalesce("revoked_at", ?) where "id" = ? and "form_id" = ? and "used_at" is null returning *`,
          [now(), req.id, req.formId],
          "all",
        )) as LinkRow[];
        if (row) return { link: linkMessage(row) };
        const [used] = (await orm.em.fork().getConnection().execute(`select * from ${table} where "id" = ? and "form_id" = ?`, [req.id, req.formId], "all")) as LinkRow[];
        if (!used) throw new ConnectError("link not found", Code.NotFound);
        throw new ConnectError("this link was already used: its response stands", Code.FailedPrecondition);
      },

      async checkResponseLink(req) {
        const problem = req.token ? problemOf(await find(req.formId, req.token), now()) : "linkMissing";
        return problem ? { problem: refusals[problem], code: problem } : { problem: "", code: "" };
      },
    },
  };
}

/** Deletes a purged form's links (form-purge.ts). */
export async function deleteLinksOf(orm: MikroORM, formId: string): Promise<void> {
  await orm.em.fork().getConnection().execute(`delete from ${tableOf(orm)} where "form_id" = ?`, [formId], "run");
}
