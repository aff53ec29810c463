//! The monitor's web server: `GET /` is the page, `GET /events` a server-sent event
//! stream of the board. Plain `std::net`, one thread per connection, a bounded number of
//! connections and bounded requests; `httparse` parses the request head. (Not a server
//! crate such as `tiny_http`: its responses hold a body back until 8 KiB have gathered,
//! which would delay every event, and after a stream it keeps the connection for a next
//! request, so the stream's end would not reach the page.)

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::CliError;
use crate::monitor::board::Board;

/// The page: HTML with its script, style and drawings inline (no outside resource).
const PAGE: &str = include_str!("page.html");

/// Longest request head read; a longer one is refused.
const MAX_REQUEST_BYTES: usize = 8 * 1024;
/// Most header lines in a request head; more are refused.
const MAX_HEADERS: usize = 32;
/// Longest the server reads and drops a refused request's rest.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);
/// Most bytes of a refused request's rest read and dropped.
const DRAIN_BYTES: usize = 1 << 20;
/// Connections served at once; more are refused with 503.
const MAX_CONNECTIONS: usize = 32;
/// A client that sends its request or takes our bytes slower than this is dropped.
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// Shortest wall time between two events of one stream.
const EVENT_INTERVAL: Duration = Duration::from_millis(100);
/// A comment line goes out after this long without an event, so proxies keep the stream.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// Listens on `value`, the `--serve` flag's IP:PORT, and nowhere else. Every failure is
/// bad input naming the flag: a value that is not IP:PORT, a port in use, an address
/// that is not this machine's.
pub fn bind(value: &str) -> Result<TcpListener, CliError> {
    let addr: SocketAddr = value.parse().map_err(|_| {
        CliError::input(format!(
            "--serve '{value}': not an IP:PORT address (e.g. 127.0.0.1:8080, or [::1]:8080; port 0 picks a free port)"
        ))
    })?;
    TcpListener::bind(addr).map_err(|e| {
        let why = match e.kind() {
            ErrorKind::AddrInUse => "the port is already in use".to_string(),
            ErrorKind::AddrNotAvailable => "the address is not one of this machine's".to_string(),
            ErrorKind::PermissionDenied => "permission denied (ports below 1024 need privileges)".to_string(),
            _ => format!("cannot listen: {e}"),
        };
        CliError::input(format!("--serve {addr}: {why}"))
    })
}

/// Serves `board` on `listener` from a background thread until the process ends.
pub fn spawn(listener: TcpListener, board: Arc<Board>) {
    let open = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            // A failed accept (the client gave up, no file descriptors left) ends only
            // that connection.
            let Ok(stream) = stream else { continue };
            if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                open.fetch_sub(1, Ordering::SeqCst);
                let _ = respond(stream, "503 Service Unavailable", "text/plain", b"too many connections\n");
                continue;
            }
            let board = Arc::clone(&board);
            let open = Arc::clone(&open);
            std::thread::spawn(move || {
                // Any I/O error ends only this connection: the client went away.
                let _ = handle(stream, &board);
                open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
}

fn handle(mut stream: TcpStream, board: &Board) -> std::io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = read_head(&mut stream)?;
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let (method, target) = match head.as_deref().map(|head| request.parse(head)) {
        Some(Ok(httparse::Status::Complete(_))) => (request.method.unwrap_or(""), request.path.unwrap_or("")),
        _ => {
            let why: &[u8] = b"request head malformed, too long or incomplete\n";
            respond(stream.try_clone()?, "400 Bad Request", "text/plain", why)?;
            return drain(stream);
        }
    };
    let path = target.split('?').next().unwrap_or("");
    match (method, path) {
        ("GET", "/") => respond(stream, "200 OK", "text/html; charset=utf-8", PAGE.as_bytes()),
        ("GET", "/events") => events(stream, board),
        ("GET", _) => respond(stream, "404 Not Found", "text/plain", b"not found: the monitor is / and /events\n"),
        _ => respond(stream, "405 Method Not Allowed", "text/plain", b"only GET\n"),
    }
}

/// The request head up to its blank line, or `None` when it is longer than
/// [`MAX_REQUEST_BYTES`] or the client stops before the end. `httparse` parses it.
fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<Vec<u8>>> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        if head.len() > MAX_REQUEST_BYTES {
            return Ok(None);
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        head.extend_from_slice(&chunk[..n]);
    }
    Ok(Some(head))
}

/// Reads and drops what the client still sends (a bounded amount, for a bounded time), so
/// that closing does not reset the connection before the client has read our answer.
fn drain(mut stream: TcpStream) -> std::io::Result<()> {
    stream.shutdown(std::net::Shutdown::Write)?;
    stream.set_read_timeout(Some(DRAIN_TIMEOUT))?;
    let mut chunk = [0u8; 4096];
    let mut left = DRAIN_BYTES;
    while left > 0 {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => left = left.saturating_sub(n),
        }
    }
    Ok(())
}

fn respond(mut stream: TcpStream, status: &str, content_type: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    stream.flush()
}

/// The event stream: a `progress` event (JSON of [`crate::monitor::board::Delta`]) when
/// the board changes, at most one per [`EVENT_INTERVAL`], each with only the samples this
/// stream has not sent yet; a `done` event after the board closes, then the end.
fn events(mut stream: TcpStream, board: &Board) -> std::io::Result<()> {
    stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
          Connection: close\r\n\r\nretry: 1000\n\n",
    )?;
    let mut seen = Vec::new();
    let mut version = None;
    let mut last_write = Instant::now();
    loop {
        let delta = board.delta(&mut seen);
        if version != Some(delta.version) {
            version = Some(delta.version);
            let json = serde_json::to_string(&delta).map_err(std::io::Error::other)?;
            write!(stream, "event: progress\ndata: {json}\n\n")?;
            stream.flush()?;
            last_write = Instant::now();
        }
        if delta.closed {
            stream.write_all(b"event: done\ndata: {}\n\n")?;
            return stream.flush();
        }
        std::thread::sleep(EVENT_INTERVAL);
        if board.wait_change(delta.version, KEEPALIVE) == delta.version && last_write.elapsed() >= KEEPALIVE {
            stream.write_all(b": keep-alive\n\n")?;
            stream.flush()?;
            last_write = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufRead;

    use super::*;
    use crate::monitor::board::RunPlan;

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn bad_values_and_taken_ports_name_the_flag() {
        for value in ["", "localhost", "127.0.0.1", "127.0.0.1:99999", "x:80", "http://127.0.0.1:80/"] {
            let e = bind(value).unwrap_err();
            assert_eq!(e.code, 2);
            assert!(e.message.starts_with(&format!("--serve '{value}': not an IP:PORT")), "{}", e.message);
        }
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap().to_string();
        let e = bind(&addr).unwrap_err();
        assert_eq!((e.code, e.message), (2, format!("--serve {addr}: the port is already in use")));
    }

    #[test]
    fn serves_the_page_refuses_the_rest_and_streams_to_done() {
        let listener = bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let plan = RunPlan { engine: "e".into(), benchmark: "insert".into(), load_total: 0, ops_total: 4 };
        let board = Arc::new(Board::new("caption".into(), &[plan]));
        spawn(listener, Arc::clone(&board));

        let page = get(addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n") && page.contains("text/html"), "{page}");
        assert!(page.contains("EventSource"));
        // Self-contained: nothing is fetched from anywhere else.
        for outside in ["src=", "href=", "<link", "@import", "url("] {
            assert!(!page.contains(outside), "the page refers to an outside resource: {outside}");
        }
        assert!(get(addr, "GET /nothing HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
        assert!(get(addr, "POST / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405 "));
        let huge = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_REQUEST_BYTES * 2));
        assert!(get(addr, &huge).starts_with("HTTP/1.1 400 "));
        assert!(get(addr, "NONSENSE\r\n\r\n").starts_with("HTTP/1.1 400 "));
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "X: y\r\n".repeat(MAX_HEADERS + 1));
        assert!(get(addr, &many).starts_with("HTTP/1.1 400 "));
        assert!(get(addr, "GET /?x=1 HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200 "));

        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(b"GET /events HTTP/1.1\r\n\r\n").unwrap();
        let mut reader = std::io::BufReader::new(stream);
        let mut data = Vec::new();
        let mut events = Vec::new();
        let mut step = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 {
                break;
            }
            if let Some(name) = line.strip_prefix("event: ") {
                events.push(name.trim().to_string());
            }
            if let Some(json) = line.strip_prefix("data: ") {
                data.push(serde_json::from_str::<serde_json::Value>(json).unwrap());
                // Each event seen makes the next change: two reports, a finish, a close.
                step += 1;
                match step {
                    1 | 2 => board.report(0, step * 2, step * 1000),
                    3 => board.finish(0),
                    4 => board.close(),
                    _ => {}
                }
            }
        }
        assert_eq!(events.last().map(String::as_str), Some("done"), "{events:?}");
        let progress: Vec<&serde_json::Value> = data.iter().filter(|d| d.get("runs").is_some()).collect();
        let ops: Vec<u64> = progress.iter().map(|d| d["runs"][0]["ops_done"].as_u64().unwrap()).collect();
        assert_eq!(ops.first(), Some(&0));
        assert_eq!(ops.last(), Some(&4));
        assert!(ops.windows(2).all(|w| w[0] <= w[1]), "{ops:?}");
        let samples: usize = progress.iter().map(|d| d["runs"][0]["samples"].as_array().unwrap().len()).sum();
        assert_eq!(samples, 2, "each sample is sent once");
        assert_eq!(progress.last().unwrap()["runs"][0]["finished"], true);
        assert_eq!(progress[0]["caption"], "caption");
    }
}
