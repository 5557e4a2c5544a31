// A modal on the native <dialog>, open while it is rendered: focus stays inside, Escape calls onClose.
// For dialogs with their own content (a choice, a typed confirmation); yes/no questions use useConfirm.
import { useEffect, useId, useRef, type ReactNode } from "react";

export function Dialog({
  title,
  onClose,
  children,
  wide,
  describedBy,
}: {
  title: string;
  onClose(): void;
  children: ReactNode;
  wide?: boolean;
  /** The id of the element that says what the dialog asks. */
  describedBy?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const el = dialog.current;
    if (el && !el.open) el.showModal();
    return () => el?.close();
  }, []);
  return (
    <dialog
      ref={dialog}
      className={wide ? "dialog dialog-wide" : "dialog"}
      aria-labelledby={titleId}
      aria-describedby={describedBy}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}
