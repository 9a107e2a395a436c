//! The system's notifications: something waits for the person while the app is not in front.
//! Sent as freedesktop's `org.freedesktop.Notifications.Notify` on the session bus, through GIO
//! (which the webview already links), so no notification library comes in. Without a bus or a
//! notification server the call fails and the in-app notice is all the person gets: said in the
//! log, never an error for the page.

use std::collections::HashMap;
use std::time::Duration;

use gio::prelude::*;

/// How long a notification server may take to answer before it is given up on: a stuck one
/// must not hold the command.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// Show `summary` with `body` (plain text: the server may read markup, so it is escaped).
pub fn show(summary: &str, body: &str) -> Result<(), String> {
    let bus = gio::bus_get_sync(gio::BusType::Session, gio::Cancellable::NONE)
        .map_err(|e| format!("the session bus: {e}"))?;
    let hints: HashMap<String, glib::Variant> =
        HashMap::from([("category".to_owned(), "im.received".to_variant())]);
    let actions: Vec<String> = Vec::new();
    let arguments =
        ("Jig", 0_u32, "dialog-information", escape(summary), escape(body), actions, hints, -1_i32)
            .to_variant();
    let timeout = i32::try_from(ANSWER_WITHIN.as_millis()).unwrap_or(i32::MAX);
    bus.call_sync(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications",
        "Notify",
        Some(&arguments),
        None,
        gio::DBusCallFlags::NO_AUTO_START,
        timeout,
        gio::Cancellable::NONE,
    )
    .map(drop)
    .map_err(|e| format!("the notification server: {e}"))
}

/// The body markup servers understand is a subset of HTML: text is escaped so a tool's name or
/// a person's cannot format, link or hide the message (nor clear a terminal-backed server).
fn escape(text: &str) -> String {
    let plain: String =
        text.chars().take(500).map(|c| if c.is_control() { ' ' } else { c }).collect();
    jig_server::escape_html(&plain)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_and_control_characters_do_not_reach_the_server() {
        assert_eq!(
            escape("<a href=\"x\">alice</a>\u{1b}[2J & 'bob'"),
            "&lt;a href=&quot;x&quot;&gt;alice&lt;/a&gt; [2J &amp; &#39;bob&#39;"
        );
        assert_eq!(escape(&"x".repeat(600)).len(), 500);
        assert_eq!(escape("a\nb"), "a b");
    }
}
