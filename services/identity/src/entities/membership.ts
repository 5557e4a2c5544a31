import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

export const roleNames = ["owner", "admin", "member"] as const;
export type RoleName = (typeof roleNames)[number];

/** A user's membership of a workspace; one per (workspace, user). */
export const MembershipEntity = defineEntity({
  name: "Membership",
  tableName: "memberships",
  properties: {
    id: p.string().primary(),
    workspaceId: p.string(),
    userId: p.string().index(),
    role: p.enum(roleNames),
    createdAt: p.datetime(),
  },
  uniques: [{ properties: ["workspaceId", "userId"] }],
});

export type Membership = InferEntity<typeof MembershipEntity>;
