import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { ApprovalRecord, Schemas } from "../../api/client";
import { useBackend, useEvents } from "../../api/context";
import { isMe } from "../../lib/people";
import type { Platform } from "../../platform";
import { useSession } from "../../api/queries";
import { Icon } from "../../components/Icon";
import { href } from "../../lib/route";

/** Something that waits for the person signed in, or what became of their own request. */
interface Notice {
  id: string;
  text: string;
  link: string;
  /** The link's words: Review (something waits for you), Open (your request was decided). */
  action: string;
  tone?: "bad";
}

/** How long a notice stays, unless dismissed. */
const SHOWN_MS = 12_000;

/**
 * Tells the person when something arrives that waits for them — someone else's call to approve
 * — and when someone decided a request of theirs (approved, or denied with the reason), wherever
 * they are in the workbench; when the page is in the background and they allowed it, also as a
 * notification of the system.
 */
export function Notices() {
  const session = useSession();
  const { platform } = useBackend();
  const [notices, setNotices] = useState<Notice[]>([]);
  const me = session.data?.person.name;
  const role = session.data?.person.role;
  const decider = role === "approver" || role === "admin";
  const queries = useQueryClient();

  useEvents((event) => {
    const notice =
      event.event === "ApprovalRequested"
        ? asked(event, me, decider)
        : event.event === "ApprovalDecided"
          ? decided(event, me, queries.getQueryData<ApprovalRecord[]>(["approvals", false]))
          : null;
    if (!notice) return;
    setNotices((now) => [...now.filter((n) => n.id !== notice.id), notice].slice(-4));
    systemNotice(notice, platform);
  });

  useEffect(() => {
    if (notices.length === 0) return;
    const timer = setTimeout(() => {
      setNotices((now) => now.slice(1));
    }, SHOWN_MS);
    return () => {
      clearTimeout(timer);
    };
  }, [notices]);

  const dismiss = (id: string) => {
    setNotices((now) => now.filter((n) => n.id !== id));
  };
  return (
    <section className="notices" aria-label="Notifications" aria-live="polite">
      {notices.map((notice, index) => (
        <div
          key={notice.id}
          className={notice.tone === "bad" ? "notice card bad" : "notice card"}
          role="status"
          onKeyDown={(e) => {
            if (e.key === "Escape") dismiss(notice.id);
          }}
        >
          <Icon name="approvals" />
          <span>{notice.text}</span>
          <a
            href={notice.link}
            className="button primary"
            onClick={() => {
              dismiss(notice.id);
            }}
          >
            {notice.action}
          </a>
          <button
            type="button"
            className="ghost"
            aria-label={`Dismiss: ${notice.text}`}
            onClick={() => {
              dismiss(notice.id);
            }}
          >
            <Icon name="cross" />
          </button>
          {index === 0 && !platform.notify && <SystemNoticesOffer />}
        </div>
      ))}
    </section>
  );
}

type ApprovalAsk = Schemas["ApprovalAsk"];
type ApprovalEvent = Schemas["ApprovalEvent"];

/** Someone else's request, for a person who may decide it. */
function asked(event: ApprovalAsk, me: string | undefined, decider: boolean): Notice | null {
  if (!decider || event.asked_by === me) return null;
  return {
    id: event.approval_id,
    text: `${event.asked_by || "Someone"} asks to run ${event.tool || "a tool"}`,
    link: href("approvals"),
    action: "Review",
  };
}

/**
 * A request of mine someone else decided: the approval is one of mine still listed as waiting
 * (the list every person has of their own requests), read before the decision refreshes it.
 */
function decided(
  event: ApprovalEvent,
  me: string | undefined,
  waiting: ApprovalRecord[] | undefined,
): Notice | null {
  if (event.verdict !== "approved" && event.verdict !== "denied") return null;
  if (isMe(event.by, me)) return null;
  const approval = waiting?.find((a) => a.id === event.approval_id);
  if (!approval || !isMe(approval.principal, me)) return null;
  const link = approval.request_id ? href("audit", approval.request_id) : href("audit");
  const id = `decided-${approval.id}`;
  if (event.verdict === "approved")
    return {
      id,
      text: `${event.by || "A reviewer"} approved your ${approval.tool}: it runs now`,
      link,
      action: "Open",
    };
  return {
    id,
    text: `${event.by || "A reviewer"} denied your ${approval.tool}${event.reason ? `: ${event.reason}` : ""}`,
    link,
    action: "Open",
    tone: "bad",
  };
}

/**
 * The system's notification when the workbench is not in front: the desktop app's own, or the
 * browser's when the person allowed them.
 */
function systemNotice(notice: Notice, platform: Platform): void {
  if (platform.notify) {
    if (!document.hasFocus()) platform.notify(titleOf(notice), notice.text);
    return;
  }
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  if (document.visibilityState === "visible") return;
  const shown = new Notification(titleOf(notice), { body: notice.text, tag: notice.id });
  shown.onclick = () => {
    window.focus();
    window.location.hash = notice.link;
  };
}

function titleOf(notice: Notice): string {
  return notice.action === "Review" ? "Jig: waiting for you" : "Jig: your request";
}

/** Offers the browser's notifications once, while the person has not chosen. */
function SystemNoticesOffer() {
  const [asked, setAsked] = useState(false);
  if (typeof Notification === "undefined" || Notification.permission !== "default" || asked) {
    return null;
  }
  return (
    <button
      type="button"
      className="ghost"
      onClick={() => {
        setAsked(true);
        void Notification.requestPermission();
      }}
    >
      Also when this page is in the background
    </button>
  );
}
