// Mail as the system writes it without SMTP_URL: one .eml file per message under DATA_DIR/mail. Lets a
// test follow a mailed link (e.g. confirm an address) in a system started without an SMTP server.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { simpleParser, type AddressObject } from "mailparser";
import { linkToken } from "./smtp.ts";

/** The token of the link to `path` in the newest mail written under `dataDir`/mail to `to`, waiting for one. */
export async function mailedFileLinkToken(dataDir: string, to: string, path: string, timeoutMs = 15_000): Promise<string> {
  const dir = join(dataDir, "mail");
  const deadline = Date.now() + timeoutMs;
  const seen = new Map<string, { to: string[]; text: string; subject: string; html: string }>();
  for (;;) {
    const names = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".eml")).sort() : [];
    for (const name of names) {
      if (seen.has(name)) continue;
      const parsed = await simpleParser(readFileSync(join(dir, name)));
      const addresses = [parsed.to ?? []].flat().flatMap((a: AddressObject) => a.value.map((v) => (v.address ?? "").toLowerCase()));
      seen.set(name, { to: addresses, text: parsed.text ?? "", subject: parsed.subject ?? "", html: typeof parsed.html === "string" ? parsed.html : "" });
    }
    const match = names.map((name) => seen.get(name)!).filter((m) => m.to.includes(to.toLowerCase()) && m.text.includes(`${path}?token=`)).at(-1);
    if (match) return linkToken({ ...match, from: "", arrivedAt: 0 }, path);
    if (Date.now() > deadline) throw new Error(`no mail to ${to} with a ${path} link under ${dir} within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
