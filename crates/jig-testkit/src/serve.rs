//! A real `jig serve` process on 127.0.0.1, and a plain HTTP/1.1 client to talk to it as a
//! browser or a script would: for tests where people act through different processes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A running `jig serve`, stopped when dropped.
#[derive(Debug)]
pub struct Serve {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The token it printed (`None` with `--users`, where every person has their own).
    pub token: Option<String>,
}

impl Serve {
    /// Start `bin` (the `jig` binary) as `jig --project PROJECT [global…] serve --addr
    /// 127.0.0.1:0 [extra…]` and wait for the address it prints.
    pub fn start(bin: &Path, project: &Path, global: &[&str], extra: &[&str]) -> Self {
        Self::start_with_env(bin, project, global, extra, &[])
    }

    /// [`Serve::start`] with `env` added to the process's environment.
    pub fn start_with_env(
        bin: &Path,
        project: &Path,
        global: &[&str],
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let mut child = Command::new(bin)
            .arg("--project")
            .arg(project)
            .args(global)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(extra)
            .env("NO_COLOR", "1")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start jig serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read the address");
        let url = line.trim();
        let rest =
            url.strip_prefix("http://").unwrap_or_else(|| panic!("jig serve printed {url:?}"));
        let (addr, query) = rest.split_once('/').unwrap_or((rest, ""));
        let token = query.strip_prefix("?token=").map(str::to_owned);
        Self { child, addr: addr.to_owned(), token }
    }

    /// A client acting with the printed token.
    pub fn client(&self) -> Client {
        Client { addr: self.addr.clone(), token: self.token.clone() }
    }

    /// A client acting with `token` (a person of `--users`).
    pub fn client_as(&self, token: &str) -> Client {
        Client { addr: self.addr.clone(), token: Some(token.to_owned()) }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stop it with SIGKILL and wait.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The server's event stream (`/api/events`), as one person's browser receives it.
pub struct Events {
    socket: tungstenite::WebSocket<TcpStream>,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Events")
    }
}

impl Events {
    /// The first event `wanted` accepts, within `within`; panics naming what did arrive.
    pub fn next_matching(&mut self, within: Duration, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(!left.is_zero(), "no matching event within {within:?}; got {seen:#?}");
            self.socket.get_ref().set_read_timeout(Some(left)).expect("timeout");
            match self.socket.read() {
                Ok(tungstenite::Message::Text(text)) => {
                    let event: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                    if wanted(&event) {
                        return event;
                    }
                    seen.push(event);
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(error) => panic!("the event stream ended: {error}; got {seen:#?}"),
            }
        }
    }
}

/// An HTTP/1.1 answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// Header lines, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON (`null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The first header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// A client of one server, sending `Authorization: Bearer` when it has a token.
#[derive(Debug, Clone)]
pub struct Client {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The bearer token.
    pub token: Option<String>,
}

impl Client {
    /// The event stream as this client's person receives it.
    pub fn events(&self) -> Events {
        let stream = TcpStream::connect(&self.addr).expect("connect");
        let mut request = tungstenite::client::IntoClientRequest::into_client_request(format!(
            "ws://{}/api/events",
            self.addr
        ))
        .expect("request");
        if let Some(token) = &self.token {
            request
                .headers_mut()
                .insert("Authorization", format!("Bearer {token}").parse().expect("header"));
        }
        let (socket, _) = tungstenite::client(request, stream).expect("WebSocket handshake");
        Events { socket }
    }

    /// `GET path`: the status and the body as JSON.
    pub fn get(&self, path: &str) -> (u16, Value) {
        let answer = self.request("GET", path, &[], None);
        (answer.status, answer.json())
    }

    /// `POST path` with a JSON body: the status and the body as JSON.
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let text = body.to_string();
        let answer = self.request(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            Some(text.as_bytes()),
        );
        (answer.status, answer.json())
    }

    /// Any request, with extra headers; the connection is closed after the answer.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Answer {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.map_or(0, <[u8]>::len)
        );
        if let Some(token) = &self.token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("send");
        if let Some(body) = body {
            stream.write_all(body).expect("send body");
        }
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("read the answer");
        parse(&raw)
    }
}

fn parse(raw: &[u8]) -> Answer {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete answer");
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked")) {
        body = dechunk(&body);
    }
    Answer { status, headers, body }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&raw[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = end + 2;
        out.extend_from_slice(&raw[start..(start + size).min(raw.len())]);
        raw = &raw[(start + size + 2).min(raw.len())..];
    }
    out
}
