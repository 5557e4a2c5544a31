// The guard on every way out of a page with unsaved changes: the app's links, its navigations and Back
// are asked in a dialog; reload, closing the tab and typing another address get the browser's own prompt.
import { useEffect } from "react";
import { useLeaveGuard } from "../router.tsx";
import { useConfirm } from "./ui.tsx";

/** While `unsaved`, leaving for an app path that `staysOnPage` does not keep asks first. */
export function useUnsavedChangesGuard(unsaved: boolean, staysOnPage: (to: string) => boolean): void {
  const confirm = useConfirm();
  useLeaveGuard(
    unsaved
      ? (to) =>
          staysOnPage(to)
            ? undefined
            : confirm({
                title: "Leave without saving?",
                body: <p>Your changes are not saved yet. If you leave now, they are lost.</p>,
                confirmLabel: "Leave without saving",
                danger: true,
              })
      : undefined,
  );
  useEffect(() => {
    if (!unsaved) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [unsaved]);
}
