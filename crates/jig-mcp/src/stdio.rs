//! `jig mcp`'s stdin and stdout, read and written on the runtime's own event loop where they
//! allow it.
//!
//! Tokio's `stdin()` and `stdout()` hand every read and write to a thread of the blocking
//! pool, since a file descriptor that was given to the process may be blocking, and is shared
//! with whoever else holds it. For an agent waiting on each call that was two thread hops a
//! call. An MCP client starts the server with a pipe (or, from Node, a socket) on each of
//! stdin and stdout, which this process alone reads or writes: those are made non-blocking
//! and watched by the event loop. Anything else (a terminal, a file) keeps tokio's way, as
//! does stdout when stderr is the same pipe (`2>&1`): making that non-blocking would make a
//! log line written while the pipe is full fail instead of waiting.

use std::fs::{File, Metadata};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use tokio::io::{AsyncRead, AsyncWrite};

/// Where requests come from.
pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// Where answers go.
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// stdin and stdout, each on the event loop when it is a pipe or a socket. Must be called
/// within the runtime.
pub fn streams() -> (Reader, Writer) {
    let reader = on_event_loop(std::io::stdin().as_fd())
        .and_then(|fd| reader(fd).ok())
        .unwrap_or_else(|| Box::new(tokio::io::stdin()));
    let writer = on_event_loop(std::io::stdout().as_fd())
        .filter(|_| !same_file(std::io::stdout().as_fd(), std::io::stderr().as_fd()))
        .and_then(|fd| writer(fd).ok())
        .unwrap_or_else(|| Box::new(tokio::io::stdout()));
    (reader, writer)
}

/// The kinds of descriptor that can be waited on for readiness.
enum Kind {
    Pipe(OwnedFd),
    Socket(OwnedFd),
}

/// A copy of `fd`, with what it is.
fn copy(fd: BorrowedFd<'_>) -> Option<(OwnedFd, Metadata)> {
    let file = File::from(fd.try_clone_to_owned().ok()?);
    let meta = file.metadata().ok()?;
    Some((file.into(), meta))
}

/// A copy of `fd` when it is a pipe or a socket.
fn on_event_loop(fd: BorrowedFd<'_>) -> Option<Kind> {
    let (owned, meta) = copy(fd)?;
    let kind = meta.file_type();
    if kind.is_fifo() {
        Some(Kind::Pipe(owned))
    } else if kind.is_socket() {
        Some(Kind::Socket(owned))
    } else {
        None
    }
}

fn reader(kind: Kind) -> std::io::Result<Reader> {
    Ok(match kind {
        Kind::Pipe(fd) => Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(fd)?),
        Kind::Socket(fd) => Box::new(socket(fd)?),
    })
}

fn writer(kind: Kind) -> std::io::Result<Writer> {
    Ok(match kind {
        Kind::Pipe(fd) => Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(fd)?),
        Kind::Socket(fd) => Box::new(socket(fd)?),
    })
}

fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

/// Whether two descriptors are the same file (the same pipe, for `2>&1`).
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    let stat = |fd| copy(fd).map(|(_, meta)| (meta.dev(), meta.ino()));
    match (stat(a), stat(b)) {
        (Some(a), Some(b)) => a == b,
        // Unknown: assume the worst.
        _ => true,
    }
}
