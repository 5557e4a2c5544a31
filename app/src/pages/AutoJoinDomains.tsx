// A workspace's auto-join domains, in its settings on the Workspaces page: shown to the owner when the installation
// signs in through an OpenID Connect provider. People whose address the provider verified at one of these domains
// join the workspace as members on their first sign-in.
import { useId, useState, type FormEvent } from "react";
import { get, put } from "../api.ts";
import { ErrorState, InlineMessage, Loading, useLoad, useNotify } from "../components/ui.tsx";
import { useSession } from "../session.tsx";
import type { Workspace } from "../types.ts";
import { t } from "../i18n/messages.ts";

interface AutoJoin {
  domains: string[];
}

/** The domains as typed: separated by commas, spaces or lines. */
export function domainsOf(text: string): string[] {
  return text.split(/[\s,]+/).map((d) => d.trim()).filter(Boolean);
}

export function AutoJoinDomains({ workspace }: { workspace: Workspace }) {
  const { signIn } = useSession();
  if (!signIn.oidc || workspace.role !== "owner") return null;
  return <AutoJoinForm workspace={workspace} provider={signIn.oidc.name} />;
}

/** A domain to show the form of one (a name, the same in every language). */
const exampleDomain = "example.org";

function AutoJoinForm({ workspace, provider }: { workspace: Workspace; provider: string }) {
  const current = useLoad(() => get<AutoJoin>(`/workspaces/${workspace.id}/auto-join-domains`), [workspace.id]);
  const [text, setText] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const notify = useNotify();
  const id = useId();
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const saved = await put<AutoJoin>(`/workspaces/${workspace.id}/auto-join-domains`, { domains: domainsOf(text ?? "") });
      current.setData(saved);
      setText(undefined);
      notify(saved.domains.length ? t("autoJoin.saved", { domains: saved.domains.join(", "), workspace: workspace.name }) : t("autoJoin.cleared", { workspace: workspace.name }));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  if (current.error) return <ErrorState message={current.error} onRetry={current.reload} />;
  if (!current.data) return <Loading what={t("autoJoin.loading")} />;
  return (
    <form className="stack auto-join" onSubmit={save}>
      <h4>{t("autoJoin.title")}</h4>
      <div className="field">
        <label htmlFor={`${id}-domains`}>{t("autoJoin.domains")}</label>
        <input
          id={`${id}-domains`}
          value={text ?? current.data.domains.join(", ")}
          onChange={(e) => setText(e.target.value)}
          placeholder={exampleDomain}
          aria-describedby={`${id}-hint`}
        />
        <p className="hint" id={`${id}-hint`}>
          {t("autoJoin.hint", { provider })}
        </p>
      </div>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
      <div className="actions">
        <button type="submit" disabled={busy || text === undefined}>
          {busy ? t("editor.saving") : t("autoJoin.save")}
        </button>
      </div>
    </form>
  );
}
