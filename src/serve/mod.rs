//! `apphost serve [--port N] [--json] [--listen ADDR]`: the host UI and the same command layer
//! as the desktop window (`host_core::api`), over loopback HTTP, for browsers and Playwright.
//!
//! The first stdout line is the URL to open: `http://127.0.0.1:PORT/?token=T`, where `T` is a
//! one-time launch token (`--json`: `{"url", "port", "pid"}`). The page that presents it gets the
//! session: an HttpOnly cookie for the UI's documents and, embedded in that one answer, the
//! per-session secret the page sends with every API call (`X-AppHost-Session`); see [`http`] for
//! why the API trusts the header and never the cookie. Each app is served from its own origin
//! `http://<label>.localhost:PORT/`. Security rules: [`guard`] and [`http`]; slow clients:
//! [`conns`]. HTTP/1.1 by hyper 1 on a small tokio runtime; SIGINT/SIGTERM end it cleanly (exit 0).

pub mod assets;
pub mod conns;
pub mod guard;
pub mod http;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use host_core::api::{LinkOpener, Session, SessionConfig};
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::surface::serve::ServeContext;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use conns::HeadWaiters;
use guard::Hosts;
use http::Server;

/// Most connections served at once (long polls hold one each); more wait to be accepted.
pub const MAX_CONNECTIONS: usize = 256;
/// After this long a connection is closed once its current request is answered (an idle
/// keep-alive connection at once), so idle connections cannot hold every slot.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(30);
/// Time a client has to send a request's headers (also how long an idle keep-alive connection
/// stays open).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request head (request line and headers): a longer one is answered 431 and the
/// connection closed.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most connections waiting for a request head at once; one more drops the oldest ([`conns`]).
pub const MAX_HEAD_WAITERS: usize = 64;

#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// 0: any free port.
    pub port: u16,
    pub json: bool,
    /// Listen on this address instead of 127.0.0.1 (with a warning).
    pub listen: Option<IpAddr>,
}

/// Runs the server until SIGINT or SIGTERM. Returns the exit code.
pub fn run(dir: DataDir, opts: ServeOptions) -> HostResult<i32> {
    if !assets::available() {
        return Err(HostError::new(
            ErrorCode::ServerUiMissing,
            "this apphost was built without the host UI: run `npm ci && npm run build`, then build apphost again",
        ));
    }
    let ip = opts.listen.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if ip.is_unspecified() {
        return Err(HostError::new(
            ErrorCode::CliUsage,
            "--listen needs one address (the page's origin is built from it), not 0.0.0.0 or ::",
        ));
    }
    if !ip.is_loopback() {
        eprintln!(
            "apphost serve: warning: listening on {ip}, not loopback: anyone who can reach it and gets the \
             launch URL controls your apps; app origins (*.localhost) only resolve on this machine"
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            HostError::new(
                ErrorCode::Internal,
                format!("cannot start the runtime: {e}"),
            )
        })?;
    let code = rt.block_on(serve(dir, opts, ip))?;
    // Long polls may still wait on the blocking pool: do not wait for them.
    rt.shutdown_timeout(Duration::from_millis(200));
    Ok(code)
}

async fn serve(dir: DataDir, opts: ServeOptions, ip: IpAddr) -> HostResult<i32> {
    let listener = TcpListener::bind(SocketAddr::new(ip, opts.port))
        .await
        .map_err(|e| {
            HostError::new(
                ErrorCode::ServerBindFailed,
                format!("cannot listen on {ip}:{}: {e}", opts.port),
            )
            .with("address", ip.to_string())
            .with("port", opts.port)
        })?;
    let port = listener
        .local_addr()
        .map_err(|e| HostError::new(ErrorCode::ServerBindFailed, e.to_string()))?
        .port();
    let hosts = Hosts {
        ui_host: ip.to_string(),
        port,
    };
    let session = Arc::new(Session::new(
        dir,
        SessionConfig {
            serve: ServeContext {
                style: OriginStyle::Localhost { port },
                frame_ancestors: vec![hosts.ui_origin()],
            },
            links: LinkOpener::Page,
            launch: None,
        },
    ));
    // Scheduled starts fire while serve runs, with or without a browser polling.
    let _schedules = host_core::api::workflow_host::tick_in_background(&session);
    // The App Server door on the same runtime (`docs/app-server.md`): without it (another
    // process owns the runtime) apps' tasks fail as before and external clients own nothing.
    let _door = match host_core::api::door::open_serving(&session) {
        Ok(door) => Some(door),
        Err(e) => {
            eprintln!("apphost serve: warning: no App Server door: {}", e.message);
            None
        }
    };
    let shutdown = shutdown_signal()?;
    let token = secret()?;
    let url = format!("{}/?token={token}", hosts.ui_origin());
    let first_line = if opts.json {
        serde_json::json!({"url": url, "port": port, "pid": std::process::id()}).to_string()
    } else {
        url
    };
    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{first_line}");
        let _ = out.flush();
    }
    let server = Arc::new(Server::new(session, hosts, token, secret()?, secret()?));
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let waiters = Arc::new(HeadWaiters::new(MAX_HEAD_WAITERS));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            _ = &mut shutdown => break,
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
        };
        let server = Arc::clone(&server);
        let waiters = Arc::clone(&waiters);
        tokio::spawn(async move {
            let waiter = waiters.admit();
            let service = {
                let (waiters, waiter) = (Arc::clone(&waiters), Arc::clone(&waiter));
                service_fn(move |req| {
                    let (server, waiters, waiter) = (
                        Arc::clone(&server),
                        Arc::clone(&waiters),
                        Arc::clone(&waiter),
                    );
                    async move {
                        // Chosen to make room in the same instant: the connection is being
                        // dropped, and this request with it.
                        let _ = waiters.leave(&waiter);
                        let answer = http::handle(server, req).await;
                        waiters.wait(&waiter);
                        answer
                    }
                })
            };
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_header_size(MAX_HEAD_BYTES)
                .max_buf_size(MAX_HEAD_BYTES)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = waiter.dropped() => {}
                _ = tokio::time::sleep(CONNECTION_LIFETIME) => {
                    conn.as_mut().graceful_shutdown();
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        _ = waiter.dropped() => {}
                    }
                }
            }
            waiters.forget(&waiter);
            drop(permit);
        });
    }
    eprintln!("apphost serve: stopped");
    Ok(0)
}

/// SIGINT (Ctrl-C) and SIGTERM, caught from the moment this is called: before the URL is
/// printed, so a caller that stops the server as soon as it read the URL still gets a clean exit.
fn shutdown_signal() -> HostResult<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let failed = |e: std::io::Error| {
            HostError::new(
                ErrorCode::Internal,
                format!("cannot catch SIGINT/SIGTERM: {e}"),
            )
        };
        let mut term = signal(SignalKind::terminate()).map_err(failed)?;
        let mut int = signal(SignalKind::interrupt()).map_err(failed)?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// 32 random bytes as hex.
fn secret() -> HostResult<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        HostError::new(ErrorCode::Internal, "no randomness available").with("reason", e.to_string())
    })?;
    Ok(hex::encode(bytes))
}
