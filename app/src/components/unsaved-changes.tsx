// The guard on every way out of a page with unsaved changes: the app's links, its navigations and Back
// are asked in a dialog; reload, closing the tab and typing another address get the browser's own prompt.
import { useEffect } from "react";
import { useLeaveGuard } from "../router.tsx";
import { useConfirm } from "./ui.tsx";
import { t } from "../i18n/messages.ts";

/**
 * While `unsaved`, leaving for an app path that `staysOnPage` does not keep asks first; with `saveFirst`
 * (a page that saves by itself), the changes are saved on the way out and only changes that cannot be
 * saved ask.
 */
export function useUnsavedChangesGuard(unsaved: boolean, staysOnPage: (to: string) => boolean, saveFirst?: () => Promise<boolean>): void {
  const confirm = useConfirm();
  const ask = () =>
    confirm({
      title: t("unsaved.title"),
      body: <p>{t("unsaved.body")}</p>,
      confirmLabel: t("unsaved.leave"),
      danger: true,
    });
  useLeaveGuard(unsaved ? (to) => (staysOnPage(to) ? undefined : saveFirst ? saveFirst().then((saved) => saved || ask()) : ask()) : undefined);
  useEffect(() => {
    if (!unsaved) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [unsaved]);
}
