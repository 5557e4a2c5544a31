// The settings a read never answers (issue 31): a form's password, kept as its scrypt hash
// (`passwordHash`), and a third-party captcha's secret key (`captcha.secret`). A patch gives them in plain;
// this turns the patch into what is stored. GetPublicForm hands them to the gateway (FormAccess).
import { Code, ConnectError } from "@connectrpc/connect";
import { settingsSecrets, type FormSettingsPatch } from "@formsvc/form-document";
import { hashPassword } from "@formsvc/platform/password-hash.ts";

const invalidSetting = (message: string) => new ConnectError(message, Code.InvalidArgument);

/** The stored settings after `patch`: a new password hashed, a captcha's secret kept or replaced. */
export async function storedSettingsAfter(stored: Record<string, unknown>, patch: FormSettingsPatch): Promise<Record<string, unknown>> {
  const { password, captcha, ...rest } = patch;
  const next: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(rest)) if (value !== undefined) next[key] = value;
  const current = settingsSecrets(stored);
  if (typeof password === "string") next.passwordHash = await hashPassword(password);
  else if (password === null || password === false) delete next.passwordHash;
  else if (password === true && !current.passwordHash) throw invalidSetting("settings.password: true keeps the current password, but the form has none: give the password itself");
  if (captcha === null) next.captcha = null;
  else if (captcha) {
    const storedCaptcha = stored.captcha as { provider?: string } | null | undefined;
    // A secret left out is the stored one, of the same provider only: another provider's would never verify.
    const secret = captcha.secret ?? (storedCaptcha?.provider === captcha.provider ? current.captchaSecret : "");
    if (!secret) throw invalidSetting(`settings.captcha.secret: is required (the ${captcha.provider} secret key)`);
    next.captcha = { provider: captcha.provider, siteKey: captcha.siteKey, secret };
  }
  // The page carries one captcha's answer: a proof of work or a provider's token.
  if (next.captcha && next.proofOfWork) throw invalidSetting("settings.captcha: a form has one captcha: set proofOfWork to null to use a provider's");
  return next;
}
