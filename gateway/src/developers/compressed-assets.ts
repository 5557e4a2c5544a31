// Static bytes answered compressed (brotli or gzip, as the client accepts) with a strong ETag. Each
// encoding of each asset is compressed once, off the event loop, the first time it is asked for, and kept.
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { Request, Response } from "express";

type Encoding = "br" | "gzip" | "identity";

const compressors: Record<Exclude<Encoding, "identity">, (bytes: Buffer) => Promise<Buffer>> = {
  // Quality 9: most of quality 11's gain on large scripts at a fraction of its time.
  br: (bytes) =>
    promisify(brotliCompress)(bytes, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    }),
  gzip: (bytes) => promisify(gzip)(bytes, { level: 9 }),
};

export interface CompressedAsset {
  /** Answers `req` with the asset: 304 when its ETag matches, else the best encoding the client accepts. */
  send(req: Request, res: Response): Promise<void>;
}

export function compressedAsset(bytes: Buffer, contentType: string, cacheControl: string): CompressedAsset {
  const hash = createHash("sha256").update(bytes).digest("base64url").slice(0, 22);
  const encoded = new Map<Encoding, Promise<Buffer>>([["identity", Promise.resolve(bytes)]]);
  const encode = (encoding: Encoding): Promise<Buffer> => {
    let body = encoded.get(encoding);
    if (!body) {
      body = compressors[encoding as Exclude<Encoding, "identity">](bytes);
      encoded.set(encoding, body);
      // A failed compression is tried again by the next request, not kept.
      body.catch(() => encoded.delete(encoding));
    }
    return body;
  };
  return {
    async send(req, res) {
      const encoding = (req.acceptsEncodings("br", "gzip", "identity") || "identity") as Encoding;
      // One ETag per encoding: the bytes differ, and caches must not mix them up.
      const etag = `"${hash}-${encoding}"`;
      res.setHeader("Cache-Control", cacheControl);
      res.setHeader("Vary", "Accept-Encoding");
      res.setHeader("ETag", etag);
      res.type(contentType);
      const sent = req.get("if-none-match");
      if (sent && sent.split(/\s*,\s*/).some((tag) => tag === etag || tag === `W/${etag}` || tag === "*")) {
        res.status(304).end();
        return;
      }
      const body = await encode(encoding);
      if (encoding !== "identity") res.setHeader("Content-Encoding", encoding);
      res.setHeader("Content-Length", String(body.length));
      res.end(req.method === "HEAD" ? undefined : body);
    },
  };
}
