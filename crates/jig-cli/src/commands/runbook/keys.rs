//! One key at a time at a terminal: `[r]un, [s]kip, [p]ause?` answers on the key press, as the
//! prompt promises (waiting for Enter after `r` looked like nothing happened).
//!
//! Only the key questions read this way; free text (a reason, evidence) is read a line at a time.
//! When stdin is not a terminal (a pipe, a file) keys are read as lines, so scripts keep working.

use std::io::{BufRead, IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::Mutex;

use rustix::termios::{
    LocalModes, OptionalActions, SpecialCodeIndex, Termios, tcgetattr, tcsetattr,
};

/// Ctrl-C and Ctrl-D: the reviewer leaves; the walk pauses (and says how to resume).
const INTERRUPT: u8 = 0x03;
const END: u8 = 0x04;

/// A byte typed right after a key that was not its Enter: the start of the next answer, kept
/// for it (typed-ahead input is never thrown away).
static AHEAD: Mutex<Option<u8>> = Mutex::new(None);

fn take_ahead() -> Option<u8> {
    AHEAD.lock().ok().and_then(|mut ahead| ahead.take())
}

/// Ask `question` and read one key; `None` when the reviewer leaves (end of input, Ctrl-C).
pub(super) fn key(
    input: &mut impl BufRead,
    out: &mut impl Write,
    question: &str,
) -> Option<String> {
    let _ = write!(out, "{question}");
    let _ = out.flush();
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return line(input);
    }
    let Ok(raw) = Raw::enter(stdin.as_fd()) else { return line(input) };
    loop {
        let byte = match take_ahead() {
            Some(byte) => byte,
            None => read_byte(&stdin)?,
        };
        match byte {
            INTERRUPT | END => {
                let _ = writeln!(out);
                return None;
            }
            // An Enter typed out of habit answers nothing.
            b'\n' | b'\r' | b' ' => continue,
            key => {
                raw.swallow_enter(&stdin);
                let key = char::from(key).to_string();
                let _ = writeln!(out, "{key}");
                return Some(key);
            }
        }
    }
}

/// One byte from the terminal; `None` at its end or on an error.
fn read_byte(stdin: &std::io::Stdin) -> Option<u8> {
    loop {
        let mut byte = [0u8; 1];
        match rustix::io::read(stdin.as_fd(), &mut byte) {
            Ok(0) => return None,
            Ok(_) => return Some(byte[0]),
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return None,
        }
    }
}

/// A line of free text (starting with a byte typed ahead, if there was one).
pub(super) fn line(input: &mut impl BufRead) -> Option<String> {
    let mut line = take_ahead().map(|b| char::from(b).to_string()).unwrap_or_default();
    if line == "\n" || line == "\r" {
        return Some(String::new());
    }
    match input.read_line(&mut line) {
        Ok(0) | Err(_) if line.is_empty() => None,
        _ => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
    }
}

/// The terminal without line editing, echo or signal keys, until dropped (then as it was, even
/// when the walk returns early).
struct Raw<Fd: AsFd> {
    fd: Fd,
    saved: Termios,
}

impl<Fd: AsFd> Raw<Fd> {
    fn enter(fd: Fd) -> rustix::io::Result<Self> {
        let saved = tcgetattr(&fd)?;
        let mut raw = saved.clone();
        raw.local_modes.remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
        raw.special_codes[SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[SpecialCodeIndex::VTIME] = 0;
        tcsetattr(&fd, OptionalActions::Now, &raw)?;
        Ok(Self { fd, saved })
    }
}

impl<Fd: AsFd> Raw<Fd> {
    /// Drop the Enter that follows a key typed with one (it arrives with the key, or within a
    /// moment); anything else typed is kept for the next answer.
    fn swallow_enter(&self, stdin: &std::io::Stdin) {
        let mut wait = self.saved.clone();
        wait.local_modes.remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
        // No minimum, a tenth of a second at most.
        wait.special_codes[SpecialCodeIndex::VMIN] = 0;
        wait.special_codes[SpecialCodeIndex::VTIME] = 1;
        if tcsetattr(&self.fd, OptionalActions::Now, &wait).is_err() {
            return;
        }
        let mut byte = [0u8; 1];
        if let Ok(1) = rustix::io::read(stdin.as_fd(), &mut byte)
            && !matches!(byte[0], b'\n' | b'\r')
            && let Ok(mut ahead) = AHEAD.lock()
        {
            *ahead = Some(byte[0]);
        }
    }
}

impl<Fd: AsFd> Drop for Raw<Fd> {
    fn drop(&mut self) {
        let _ = tcsetattr(&self.fd, OptionalActions::Now, &self.saved);
    }
}
