// A workspace's auto-join domains, in its settings on the Workspaces page: shown to the owner when the installation
// signs in through an OpenID Connect provider. People whose address the provider verified at one of these domains
// join the workspace as members on their first sign-in.
import { useId, useState, type FormEvent } from "react";
import { get, put } from "../api.ts";
import { ErrorState, InlineMessage, Loading, useLoad, useNotify } from "../components/ui.tsx";
import { useSession } from "../session.tsx";
import type { Workspace } from "../types.ts";

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
      notify(saved.domains.length ? `People at ${saved.domains.join(", ")} now join ${workspace.name} when they first sign in.` : `Nobody joins ${workspace.name} by their domain now.`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  if (current.error) return <ErrorState message={current.error} onRetry={current.reload} />;
  if (!current.data) return <Loading what="Loading auto-join domains" />;
  return (
    <form className="stack auto-join" onSubmit={save}>
      <h4>Auto-join by email domain</h4>
      <div className="field">
        <label htmlFor={`${id}-domains`}>Email domains</label>
        <input
          id={`${id}-domains`}
          value={text ?? current.data.domains.join(", ")}
          onChange={(e) => setText(e.target.value)}
          placeholder="example.org"
          aria-describedby={`${id}-hint`}
        />
        <p className="hint" id={`${id}-hint`}>
          Everyone whose address at one of these domains {provider} has verified joins this workspace as a member when they first sign in with{" "}
          {provider}. Exact domains only, separated by commas; leave empty for nobody.
        </p>
      </div>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
      <div className="actions">
        <button type="submit" disabled={busy || text === undefined}>
          {busy ? "Saving…" : "Save auto-join domains"}
        </button>
      </div>
    </form>
  );
}
