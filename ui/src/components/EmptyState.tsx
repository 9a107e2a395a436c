import type { ReactNode } from "react";

/** What an empty view says: what would be here, and how to get it there. */
export function EmptyState({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="empty" role="status">
      <h2>{title}</h2>
      {children}
    </div>
  );
}
