import { createHmac, timingSafeEqual } from "node:crypto";

/** Attachment links: `/files/:fileId?expires=<unix seconds>&signature=<HMAC>`, valid seven days. */
export const fileLinkLifetimeSeconds = 7 * 24 * 60 * 60;

export type LinkCheck = "valid" | "tampered" | "expired";

export interface FileLinks {
  sign(fileId: string, nowMs?: number): string;
  check(fileId: string, expires: string | undefined, signature: string | undefined, nowMs?: number): LinkCheck;
}

export function fileLinks(secretKey: string, publicUrl: string): FileLinks {
  const mac = (fileId: string, expires: string) =>
    createHmac("sha256", secretKey).update(`file:${fileId}:${expires}`).digest("base64url");
  return {
    sign(fileId, nowMs = Date.now()) {
      const expires = String(Math.floor(nowMs / 1000) + fileLinkLifetimeSeconds);
      return `${publicUrl}/files/${encodeURIComponent(fileId)}?expires=${expires}&signature=${mac(fileId, expires)}`;
    },
    check(fileId, expires, signature, nowMs = Date.now()) {
      if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return "tampered";
      const expected = Buffer.from(mac(fileId, expires));
      const given = Buffer.from(signature);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) return "tampered";
      return Number(expires) * 1000 < nowMs ? "expired" : "valid";
    },
  };
}
