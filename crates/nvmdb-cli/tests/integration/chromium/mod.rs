//! Headless Chromium driven over the DevTools protocol (a WebSocket on a local port), so a
//! test can read a live page several times while it updates. A minimal client: the
//! WebSocket handshake and frames (RFC 6455) and JSON commands; nothing else is needed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// The Chromium process and its profile directory: killed and removed on drop, also when
/// a check panics.
struct Process {
    child: Child,
    profile: PathBuf,
}

impl Drop for Process {
    /// Gives Chromium a few seconds to exit (after `Browser.close`), then kills it; its
    /// helper processes may still write into the profile for a moment, so the removal is
    /// retried.
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        for _ in 0..20 {
            let _ = std::fs::remove_dir_all(&self.profile);
            if !self.profile.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Process {
    fn log(&self) -> String {
        std::fs::read_to_string(self.profile.join("chromium.log")).unwrap_or_default()
    }

    /// The port Chromium wrote into its profile's `DevToolsActivePort`.
    fn devtools_port(&mut self) -> u16 {
        let file = self.profile.join("data").join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(port) = std::fs::read_to_string(&file).ok().and_then(|t| t.lines().next()?.parse().ok()) {
                return port;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("chromium exited ({status}): {}", self.log());
            }
            assert!(Instant::now() < deadline, "chromium wrote no DevToolsActivePort: {}", self.log());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A headless Chromium with one page; closed on drop.
pub struct Browser {
    socket: TcpStream,
    next_id: u64,
    _process: Process,
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.next_id += 1;
        let message = serde_json::json!({ "id": self.next_id, "method": "Browser.close" });
        // Never panics (a drop may run while a failed check unwinds); the kill follows.
        let _ = self.socket.write_all(&text_frame(message.to_string().as_bytes()));
    }
}

impl Browser {
    /// Starts `chromium` with its profile in `profile` (created, and removed on drop).
    pub fn start(chromium: &Path, profile: &Path) -> Browser {
        let _ = std::fs::remove_dir_all(profile);
        std::fs::create_dir_all(profile).unwrap();
        let log = std::fs::File::create(profile.join("chromium.log")).unwrap();
        let child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1280,1400",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.join("data").display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("chromium starts");
        let mut process = Process { child, profile: profile.to_path_buf() };
        let port = process.devtools_port();
        let socket = websocket_connect(port, &page_socket_url(port));
        Browser { socket, next_id: 0, _process: process }
    }

    /// Sends one command and returns its `result`, skipping the events in between.
    pub fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = serde_json::json!({ "id": id, "method": method, "params": params });
        send_text(&mut self.socket, message.to_string().as_bytes());
        loop {
            let reply: serde_json::Value = serde_json::from_slice(&read_message(&mut self.socket)).unwrap();
            if reply["id"] == id {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// Opens `url` in the page.
    pub fn navigate(&mut self, url: &str) {
        let result = self.call("Page.navigate", serde_json::json!({ "url": url }));
        assert!(result.get("errorText").is_none(), "{url}: {result}");
    }

    /// The value of a JavaScript expression in the page (JSON-serialisable values only).
    pub fn eval(&mut self, expression: &str) -> serde_json::Value {
        let result =
            self.call("Runtime.evaluate", serde_json::json!({ "expression": expression, "returnByValue": true }));
        assert!(result.get("exceptionDetails").is_none(), "{expression}: {result}");
        result["result"]["value"].clone()
    }

    /// Evaluates `expression` every 100 ms until it is neither null nor false nor throws,
    /// and returns that value; panics after `limit`.
    pub fn wait_for(&mut self, expression: &str, limit: Duration) -> serde_json::Value {
        let guarded = format!("(function () {{ try {{ return ({expression}); }} catch (e) {{ return null; }} }})()");
        let deadline = Instant::now() + limit;
        loop {
            let value = self.eval(&guarded);
            if !value.is_null() && value != false {
                return value;
            }
            assert!(Instant::now() < deadline, "not within {limit:?}: {expression}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A PNG screenshot of the whole page.
    pub fn screenshot_png(&mut self) -> Vec<u8> {
        let result = self.call("Page.captureScreenshot", serde_json::json!({ "captureBeyondViewport": true }));
        base64_decode(result["data"].as_str().unwrap())
    }
}

/// The WebSocket path of the first page target, from `GET /json/list` (Chromium keeps
/// the connection open, so the body is read by its length).
fn page_socket_url(port: u16) -> String {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(&stream, "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut length = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let mut body = vec![0u8; length.expect("a Content-Length")];
    reader.read_exact(&mut body).unwrap();
    let targets: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let page = targets.as_array().unwrap().iter().find(|t| t["type"] == "page").expect("a page target");
    let url = page["webSocketDebuggerUrl"].as_str().unwrap();
    let path = url.split_once("//").unwrap().1;
    path[path.find('/').unwrap()..].to_string()
}

fn websocket_connect(port: u16, path: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .unwrap();
    // Read the answer head byte by byte, so no frame byte is consumed with it.
    let mut reader = BufReader::with_capacity(1, stream.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 101"), "WebSocket upgrade refused: {status}");
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            return stream;
        }
    }
}

fn send_text(stream: &mut TcpStream, payload: &[u8]) {
    stream.write_all(&text_frame(payload)).unwrap();
}

/// One masked text frame (a client must mask; the key may be any four bytes).
fn text_frame(payload: &[u8]) -> Vec<u8> {
    let mask = [0x5a, 0x17, 0xc3, 0x88];
    let mut frame = vec![0x81];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n < 65536 => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    frame
}

/// The next whole message, joining continuation frames; control frames are skipped.
fn read_message(stream: &mut TcpStream) -> Vec<u8> {
    let mut message = Vec::new();
    loop {
        let mut head = [0u8; 2];
        stream.read_exact(&mut head).unwrap();
        let (fin, opcode, masked) = (head[0] & 0x80 != 0, head[0] & 0x0f, head[1] & 0x80 != 0);
        let len = match head[1] & 0x7f {
            126 => {
                let mut b = [0u8; 2];
                stream.read_exact(&mut b).unwrap();
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0u8; 8];
                stream.read_exact(&mut b).unwrap();
                u64::from_be_bytes(b)
            }
            n => u64::from(n),
        };
        assert!(!masked, "a server never masks");
        let mut payload = vec![0u8; usize::try_from(len).unwrap()];
        stream.read_exact(&mut payload).unwrap();
        assert_ne!(opcode, 0x8, "Chromium closed the DevTools connection");
        if opcode >= 0x8 {
            continue;
        }
        message.extend_from_slice(&payload);
        if fin {
            return message;
        }
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut bits, mut count) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        let value = ALPHABET.iter().position(|&a| a == c).expect("base64") as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    out
}
