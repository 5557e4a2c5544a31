import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** A person. The email is stored lower-cased and is unique. */
export const UserEntity = defineEntity({
  name: "User",
  tableName: "users",
  properties: {
    id: p.string().primary(),
    email: p.string().unique(),
    name: p.string(),
    createdAt: p.datetime(),
    /** scrypt hash (see passwords.ts); null for users without a password (made by the CLI). */
    passwordHash: p.string().nullable(),
    /** When the person followed the verification link mailed at sign-up; null until then. */
    emailVerifiedAt: p.datetime().nullable(),
    /** Whether the person administers the installation: the first account made (see firstAccountAdministers). */
    administrator: p.boolean(),
    /** The TOTP secret of the person's second factor, sealed (see two-factor.ts); null while they have none. */
    totpSecret: p.string().nullable(),
    /** A secret being enrolled, until a code of it confirms it. */
    totpPendingSecret: p.string().nullable(),
    /** The last TOTP time step a code passed for: a code of it or an earlier one is refused (each is good once). */
    totpLastStep: p.bigint("number").nullable(),
    /** The language the person chose for the app (a BCP 47 tag); null while they chose none. */
    locale: p.string().nullable(),
  },
});

export type User = InferEntity<typeof UserEntity>;
