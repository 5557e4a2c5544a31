import type { Client } from "@connectrpc/connect";
import { type Router } from "express";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { HttpError } from "../http-errors.ts";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import { newRouter } from "../routing.ts";

// Types a browser may show inline; anything else downloads, so an uploaded page cannot run here.
const inlineTypes = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain"]);

/**
 * `/files/:fileId`: serves an attachment to whoever holds a valid signed link: its bytes from the local
 * store, or a 302 to a presigned URL of the S3 store.
 */
export function fileRoutes(submissions: Client<typeof SubmissionsService>, links: FileLinks): Router {
  const router = newRouter();
  router.get("/:fileId", async (req, res) => {
    const { expires, signature } = req.query as Record<string, string | undefined>;
    const check = links.check(req.params.fileId, expires, signature);
    if (check === "tampered") throw new HttpError(403, "invalid file link");
    if (check === "expired") throw new HttpError(410, "this file link has expired");
    const { file, content, downloadUrl } = await submissions.readFile({ fileId: req.params.fileId });
    if (downloadUrl) {
      // An object store serves the bytes itself (an attachment, for minutes): the gateway streams nothing.
      res.setHeader("Cache-Control", "private, no-store");
      res.setHeader("Referrer-Policy", "no-referrer");
      res.redirect(302, downloadUrl);
      return;
    }
    const type = file!.contentType || "application/octet-stream";
    res.setHeader("Content-Type", type);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Content-Security-Policy", "sandbox; default-src 'none'");
    res.setHeader("Cache-Control", "private, max-age=300");
    res.setHeader(
      "Content-Disposition",
      `${inlineTypes.has(type) ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(file!.name)}`,
    );
    res.end(Buffer.from(content));
  });
  return router;
}
