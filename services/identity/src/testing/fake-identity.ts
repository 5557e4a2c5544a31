// The identity service in memory, for the unit tests of those that call it (forms, the gateway's
// idempotency): workspaces, their members and roles, answering GetWorkspace, ListWorkspaces and
// GetWorkspaceEntitlements with identity's codes and messages; and its idempotency store
// (BeginIdempotency, CompleteIdempotency). Imported by tests only.
import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { callerOf } from "@formsvc/platform/caller.ts";
import {
  BeginIdempotencyResponse_Outcome as Outcome,
  EntitlementsSchema,
  IdentityService,
  Plan,
  Role,
  WorkspaceSchema,
  type Workspace,
} from "@formsvc/proto/identity/v1/identity_pb.js";

/** A workspace as the fake keeps it: the owner is the workspace's ownerId, `admins` are admins, the rest of `members` members. */
export interface FakeWorkspace {
  workspace: Workspace;
  members: string[];
  admins?: string[];
}

type Method = "getWorkspace" | "listWorkspaces" | "getWorkspaceEntitlements" | "beginIdempotency" | "completeIdempotency";

/** A stored idempotent request: its hash, and once completed the answer it got. */
export interface FakeIdempotencyRow {
  requestHash: string;
  status?: number;
  body?: Uint8Array;
}

/** A workspace of `plan` owned by `ownerId`, its entitlements following the plan (PRO removes the branding). */
export function fakeWorkspace(id: string, plan: Plan, ownerId: string): Workspace {
  return create(WorkspaceSchema, { id, name: id, plan, ownerId, entitlements: create(EntitlementsSchema, { removeBranding: plan === Plan.PRO }) });
}

export class FakeIdentity {
  readonly workspaces: FakeWorkspace[] = [];
  /** The callers GetWorkspace and ListWorkspaces were asked for, in order. */
  readonly callers: string[] = [];
  /** The workspaces GetWorkspaceEntitlements was asked for (an internal call, without a caller). */
  readonly entitlementLookups: string[] = [];
  /** The idempotency store, by `<scope>|<key>`. */
  readonly idempotencyRows = new Map<string, FakeIdempotencyRow>();
  /** When it returns an error for a call, the call fails with it at once: a broken or unreachable identity. */
  failWith: ((method: Method) => ConnectError | undefined) | undefined;
  readonly client: Client<typeof IdentityService>;

  constructor(workspaces: FakeWorkspace[] = []) {
    this.workspaces.push(...workspaces);
    const failIfTold = (method: Method) => {
      const failure = this.failWith?.(method);
      if (failure) throw failure;
    };
    const needsCaller = (caller: string | undefined): string => {
      if (!caller) throw new ConnectError("this call needs a caller", Code.Unauthenticated);
      this.callers.push(caller);
      return caller;
    };
    this.client = createClient(
      IdentityService,
      createRouterTransport((router) =>
        router.service(IdentityService, {
          getWorkspace: (req, ctx) => {
            failIfTold("getWorkspace");
            const caller = needsCaller(callerOf(ctx));
            const found = this.workspaces.find((w) => w.workspace.id === req.workspaceId && w.members.includes(caller));
            if (!found) throw new ConnectError("workspace not found", Code.NotFound);
            const role = found.workspace.ownerId === caller ? Role.OWNER : found.admins?.includes(caller) ? Role.ADMIN : Role.MEMBER;
            return { workspace: { ...found.workspace, role } };
          },
          getWorkspaceEntitlements: (req, ctx) => {
            failIfTold("getWorkspaceEntitlements");
            assert.equal(callerOf(ctx), undefined, "the entitlements are asked for without a caller");
            this.entitlementLookups.push(req.workspaceId);
            const found = this.workspaces.find((w) => w.workspace.id === req.workspaceId);
            if (!found) throw new ConnectError("workspace not found", Code.NotFound);
            return { entitlements: found.workspace.entitlements };
          },
          listWorkspaces: (req, ctx) => {
            failIfTold("listWorkspaces");
            const caller = needsCaller(callerOf(ctx));
            assert.equal(req.limit, 0, "the fake does not page: ask for every workspace (limit 0)");
            return { workspaces: this.workspaces.filter((w) => w.members.includes(caller)).map((w) => w.workspace), hasMore: false };
          },
          beginIdempotency: (req) => {
            failIfTold("beginIdempotency");
            const id = `${req.scope}|${req.key}`;
            const row = this.idempotencyRows.get(id);
            if (!row) {
              this.idempotencyRows.set(id, { requestHash: req.requestHash });
              return { outcome: Outcome.PROCEED };
            }
            if (row.requestHash !== req.requestHash) return { outcome: Outcome.MISMATCH };
            if (row.status === undefined) return { outcome: Outcome.IN_PROGRESS };
            return { outcome: Outcome.REPLAY, status: row.status, body: row.body };
          },
          completeIdempotency: (req) => {
            failIfTold("completeIdempotency");
            const id = `${req.scope}|${req.key}`;
            if (req.release) this.idempotencyRows.delete(id);
            else this.idempotencyRows.set(id, { requestHash: req.requestHash, status: req.status, body: req.body });
            return {};
          },
        }),
      ),
    );
  }

  /** Changes a workspace's plan, as SetPlan would (its entitlements follow). */
  setPlan(id: string, plan: Plan): void {
    const found = this.workspaces.find((w) => w.workspace.id === id);
    assert.ok(found, `no workspace ${id}`);
    found.workspace.plan = plan;
    found.workspace.entitlements = create(EntitlementsSchema, { removeBranding: plan === Plan.PRO });
  }
}
