//! What a call shows on a terminal while it runs: a progress bar (a spinner until the tool says
//! how far it is) and the tool's streamed output, on stderr, from the engine's events. Nothing
//! is shown when stderr is not a terminal, so piped and scripted use stays clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use jig_engine::{Engine, Event};

/// Show the progress and output of `request_id` until the returned task is aborted.
pub fn show(engine: &Engine, request_id: &str) -> Option<tokio::task::JoinHandle<()>> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let mut events = engine.subscribe();
    let request_id = request_id.to_owned();
    let bar = ProgressBar::with_draw_target(Some(100), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed:>4} {bar:30} {pos:>3}% {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    Some(tokio::spawn(async move {
        let _clear = Clear(bar.clone());
        loop {
            match events.recv().await {
                Ok(Event::Message(message)) if message.request_id == request_id => {
                    if let Some(progress) = &message.progress {
                        if let Some(pct) = progress.pct {
                            bar.set_position(pct.clamp(0.0, 100.0) as u64);
                        }
                        if let Some(text) = &progress.message {
                            bar.set_message(text.clone());
                        }
                    }
                    let chunk = message.data.as_ref().and_then(|d| d.get("text")?.as_str());
                    if message.event == "OutputChunk"
                        && let Some(text) = chunk
                    {
                        bar.suspend(|| eprint!("{text}"));
                    }
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    }))
}

/// Clears the bar when the task ends (aborted when the call returns).
struct Clear(ProgressBar);

impl Drop for Clear {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
