import type { Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { userJson } from "@formsvc/api-records";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { defineRoute } from "../route-table.ts";
import { userSchema } from "../schemas.ts";

export function userRoutes(identity: Client<typeof IdentityService>) {
  return [
    defineRoute({
      method: "get",
      path: "/users/me",
      operationId: "getCurrentUser",
      tag: "Users",
      summary: "The user the API key belongs to",
      description: "The user, as the key sees itself: handy to check that a key works.",
      success: { status: 200, description: "The calling user", schema: userSchema },
      errors: [],
      handle: async ({ caller }) => userJson((await identity.getCurrentUser({}, asCaller(caller.userId))).user!),
    }),
  ];
}
