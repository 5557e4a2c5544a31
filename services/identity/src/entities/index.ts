import { ApiKeyEntity } from "./api-key.ts";
import { MembershipEntity } from "./membership.ts";
import { SessionEntity } from "./session.ts";
import { UserEntity } from "./user.ts";
import { WorkspaceEntity } from "./workspace.ts";

export { ApiKeyEntity, MembershipEntity, SessionEntity, UserEntity, WorkspaceEntity };

/** Every entity of the identity schema, for openDatabase. */
export const entities = [UserEntity, WorkspaceEntity, MembershipEntity, ApiKeyEntity, SessionEntity];
