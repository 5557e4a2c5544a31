// Ceilings for scenario 1, each an Express 5 app in its own process:
//   static: GET /api/v1/forms/:id serves BENCH_BODY from memory after a bearer check against BENCH_KEY.
//   pg:     the same route straight on Postgres (DATABASE_URL), no RPC hop: key by prefix + hash joined to
//           its user, the form, and the caller's membership of the form's workspace.
import { createHash, timingSafeEqual } from "node:crypto";
import express from "express";
import pg from "pg";

const mode = process.argv[2];
const app = express();
app.disable("x-powered-by");
const bearer = /^Bearer\s+(\S+)\s*$/i;

if (mode === "static") {
  const body = process.env.BENCH_BODY!;
  const key = process.env.BENCH_KEY!;
  app.get("/api/v1/forms/:id", (req, res) => {
    if (bearer.exec(req.get("authorization") ?? "")?.[1] !== key) return void res.status(401).json({ error: "invalid API key" });
    res.type("application/json").send(body);
  });
} else {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  app.get("/api/v1/forms/:id", async (req, res) => {
    const key = bearer.exec(req.get("authorization") ?? "")?.[1];
    if (!key) return void res.status(401).json({ error: "missing API key" });
    const keys = await pool.query(
      `select k.id, k.key_hash, u.id as user_id from identity.api_keys k join identity.users u on u.id = k.user_id where k.prefix = $1`,
      [key.slice(0, 12)],
    );
    const digest = createHash("sha256").update(key).digest();
    const match = keys.rows.find((r) => timingSafeEqual(Buffer.from(r.key_hash, "hex"), digest));
    if (!match) return void res.status(401).json({ error: "invalid API key" });
    const forms = await pool.query(
      `select f.* from forms.forms f where f.id = $1 and f.trashed_at is null
         and exists (select 1 from identity.memberships m where m.workspace_id = f.workspace_id and m.user_id = $2)`,
      [req.params.id, match.user_id],
    );
    if (forms.rowCount === 0) return void res.status(404).json({ error: "form not found" });
    const f = forms.rows[0];
    res.json({
      id: f.id,
      workspaceId: f.workspace_id,
      name: f.name,
      status: f.status,
      document: f.document,
      settings: f.settings,
      version: f.version,
      responseCount: Number(f.response_count),
      createdAt: f.created_at,
      updatedAt: f.updated_at,
    });
  });
}

const server = app.listen(0, "127.0.0.1", () => {
  const addr = server.address();
  console.log(`port=${typeof addr === "object" && addr ? addr.port : 0}`);
});
process.on("SIGTERM", () => process.exit(0));
