import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

export const planNames = ["free", "pro"] as const;
export type PlanName = (typeof planNames)[number];

/** A workspace holds forms; its plan decides its entitlements. */
export const WorkspaceEntity = defineEntity({
  name: "Workspace",
  tableName: "workspaces",
  properties: {
    id: p.string().primary(),
    name: p.string(),
    plan: p.enum(planNames),
    ownerId: p.string(),
    personal: p.boolean(),
    createdAt: p.datetime(),
    /** Whether members must sign in with a second factor. */
    requireTwoFactor: p.boolean(),
  },
});

export type Workspace = InferEntity<typeof WorkspaceEntity>;
