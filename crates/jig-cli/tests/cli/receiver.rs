//! A real HTTP server on loopback for what Jig sends out (a checkpoint PUT, a webhook POST):
//! it answers each request with the next of the statuses it was given, and hands back what it
//! received.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::thread::JoinHandle;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    /// `METHOD PATH HTTP/1.1`.
    pub line: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Listen on 127.0.0.1; answer one request per status (`"503 Service Unavailable"`), then
/// stop. Returns the base URL and the thread that yields what was received.
pub fn serve(statuses: Vec<&'static str>) -> (String, JoinHandle<Vec<Received>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let thread = std::thread::spawn(move || {
        let mut received = Vec::new();
        for status in statuses {
            let (stream, _) = listener.accept().expect("accept");
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            reader.read_line(&mut line).expect("request line");
            let mut headers = Vec::new();
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).expect("header");
                let Some((name, value)) = header.trim_end().split_once(':') else { break };
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
            let length = headers
                .iter()
                .find(|(n, _)| n == "content-length")
                .map_or(0, |(_, v)| v.parse().expect("length"));
            let mut body = vec![0; length];
            reader.read_exact(&mut body).expect("body");
            let mut stream = reader.into_inner();
            write!(stream, "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .expect("answer");
            received.push(Received {
                line: line.trim_end().to_owned(),
                headers,
                body: String::from_utf8(body).expect("utf-8"),
            });
        }
        received
    });
    (base, thread)
}
