import { useEffect, useState } from "react";
import { useBackend, useEvents } from "../../api/context";
import type { Platform } from "../../platform";
import { useSession } from "../../api/queries";
import { Icon } from "../../components/Icon";
import { href } from "../../lib/route";

/** Something that waits for the person signed in. */
interface Notice {
  id: string;
  text: string;
  link: string;
}

/** How long a notice stays, unless dismissed. */
const SHOWN_MS = 12_000;

/**
 * Tells the person when something arrives that waits for them — someone else's call to approve
 * — wherever they are in the workbench, and, when the page is in the background and they
 * allowed it, as a notification of the system.
 */
export function Notices() {
  const session = useSession();
  const { platform } = useBackend();
  const [notices, setNotices] = useState<Notice[]>([]);
  const me = session.data?.person.name;
  const role = session.data?.person.role;
  const decider = role === "approver" || role === "admin";

  useEvents((raw) => {
    const event = raw as { event?: string; approval_id?: string; tool?: string; asked_by?: string };
    if (event.event !== "ApprovalRequested" || !decider || event.asked_by === me) return;
    const notice = {
      id: event.approval_id ?? String(Date.now()),
      text: `${event.asked_by ?? "Someone"} asks to run ${event.tool ?? "a tool"}`,
      link: href("approvals"),
    };
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
      {notices.map((notice) => (
        <div
          key={notice.id}
          className="notice card"
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
            Review
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
          {!platform.notify && <SystemNoticesOffer />}
        </div>
      ))}
    </section>
  );
}

/**
 * The system's notification when the workbench is not in front: the desktop app's own, or the
 * browser's when the person allowed them.
 */
function systemNotice(notice: Notice, platform: Platform): void {
  if (platform.notify) {
    if (!document.hasFocus()) platform.notify("Jig: waiting for you", notice.text);
    return;
  }
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  if (document.visibilityState === "visible") return;
  const shown = new Notification("Jig: waiting for you", { body: notice.text, tag: notice.id });
  shown.onclick = () => {
    window.focus();
    window.location.hash = notice.link;
  };
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
