import type { Client } from "@connectrpc/connect";
import { userJson } from "@formsvc/api-records";
import { userSchema } from "@formsvc/api-records/schemas";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { defineRoute } from "./route.ts";

export function userRoutes(identity: Client<typeof IdentityService>) {
  return [
    defineRoute({
      method: "get",
      path: "/users/me",
      success: { status: 200, description: "The calling user", schema: userSchema },
      handle: async ({ asUser }) => userJson((await identity.getCurrentUser({}, asUser)).user!),
      api: {
        operationId: "getCurrentUser",
        tag: "Users",
        summary: "The user the API key belongs to",
        description: "The user, as the key sees itself: handy to check that a key works.",
        errors: [],
      },
    }),
  ];
}
