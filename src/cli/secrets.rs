//! `apphost secrets set|list|unset <app> [<slot>]`: bind values to the `secrets[]` slots an
//! app declares (host-core's `app_secrets`). The value is read from stdin, never from an
//! argument (other users can read a process's arguments), without echo on a terminal, and is
//! never printed.

use std::io::{IsTerminal, Read, Write};

use clap::Subcommand;
use serde_json::json;

use super::output;
use super::store_open::open_locked;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::hosting::app_secrets;
use host_core::install::secrets::{SecretValue, MAX_SECRET_BYTES};
use host_core::install::store::Store;
use zeroize::Zeroizing;

#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Bind a value to a secret slot the app declares; the value is read from stdin (typed
    /// without echo on a terminal; one trailing newline is dropped).
    Set { app: String, slot: String },
    /// List the app's secret slots: required or not, bound or not (never a value).
    List { app: String },
    /// Remove the value bound to a slot.
    Unset { app: String, slot: String },
}

pub fn run(dir: &DataDir, cmd: SecretsCommand, json: bool) -> HostResult<i32> {
    match cmd {
        SecretsCommand::Set { app, slot } => set(dir, &app, &slot, json),
        SecretsCommand::List { app } => list(dir, &app, json),
        SecretsCommand::Unset { app, slot } => unset(dir, &app, &slot, json),
    }
}

fn set(dir: &DataDir, app: &str, slot: &str, json: bool) -> HostResult<i32> {
    // The slot is checked before the user types anything.
    let store = open_locked(dir, json)?;
    app_secrets::check_slot(&store, app, slot)?;
    let value = read_value(slot)?;
    let binding = app_secrets::set(&store, app, slot, &value)?;
    let backend = binding
        .stored_as
        .split(':')
        .next()
        .unwrap_or("secret store");
    output::done(
        json,
        &format!("bound secret {slot} of {app} (kept in the {backend})"),
        &json!({"app": app, "slot": slot, "bound": true, "store": backend}),
    );
    Ok(0)
}

fn list(dir: &DataDir, app: &str, json: bool) -> HostResult<i32> {
    let slots = app_secrets::list(&Store::open(dir)?, app)?;
    if json {
        output::print_json(&slots);
    } else if slots.is_empty() {
        out_line!("{app} declares no secret slots");
    } else {
        for s in &slots {
            out_line!(
                "{:<24} {:<8} {}",
                s.slot,
                if s.required { "required" } else { "optional" },
                match &s.store {
                    Some(b) if s.bound => format!("bound ({b})"),
                    _ => "not bound".to_owned(),
                }
            );
        }
    }
    Ok(0)
}

fn unset(dir: &DataDir, app: &str, slot: &str, json: bool) -> HostResult<i32> {
    let store = open_locked(dir, json)?;
    let was = app_secrets::unset(&store, app, slot)?;
    output::done(
        json,
        &if was {
            format!("unbound secret {slot} of {app}")
        } else {
            format!("secret {slot} of {app} was not bound; nothing changed")
        },
        &json!({"app": app, "slot": slot, "unbound": was}),
    );
    Ok(0)
}

/// Reads the value from stdin: at most 64 KiB plus a newline, UTF-8, one trailing `\n` or
/// `\r\n` dropped, not empty. On a terminal the typing is not echoed.
pub(super) fn read_value(slot: &str) -> HostResult<SecretValue> {
    let stdin = std::io::stdin();
    let tty = stdin.is_terminal();
    let mut raw = Zeroizing::new(Vec::new());
    if tty {
        // Echo goes off before the prompt shows, so nothing typed (or pasted) after the
        // prompt appears can be echoed.
        let guard = NoEcho::new(&stdin);
        let mut err = std::io::stderr();
        let _ = write!(err, "Value for {slot} (not shown): ");
        let _ = err.flush();
        let mut line = Zeroizing::new(String::new());
        let r = stdin
            .lock()
            .take(MAX_SECRET_BYTES as u64 + 3)
            .read_line_into(&mut line);
        drop(guard);
        let _ = writeln!(err);
        r.map_err(read_err)?;
        raw.extend_from_slice(line.as_bytes());
    } else {
        stdin
            .lock()
            .take(MAX_SECRET_BYTES as u64 + 3)
            .read_to_end(&mut raw)
            .map_err(read_err)?;
    }
    let mut bytes: &[u8] = &raw;
    if let Some(b) = bytes.strip_suffix(b"\n") {
        bytes = b.strip_suffix(b"\r").unwrap_or(b);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| {
        HostError::new(
            ErrorCode::SecretInvalidValue,
            "the secret value is not UTF-8 text; nothing was stored",
        )
    })?;
    app_secrets::check_value(text)?;
    Ok(SecretValue::new(text.to_owned()))
}

fn read_err(e: std::io::Error) -> HostError {
    HostError::new(
        ErrorCode::SecretInvalidValue,
        format!("cannot read the secret value from stdin: {e}"),
    )
}

trait ReadLineInto {
    fn read_line_into(self, line: &mut String) -> std::io::Result<usize>;
}

impl<R: std::io::BufRead> ReadLineInto for R {
    fn read_line_into(mut self, line: &mut String) -> std::io::Result<usize> {
        self.read_line(line)
    }
}

/// Turns terminal echo off while alive (restored on drop, also on an error).
struct NoEcho {
    saved: Option<rustix::termios::Termios>,
}

impl NoEcho {
    fn new(stdin: &std::io::Stdin) -> NoEcho {
        use rustix::termios::{tcgetattr, tcsetattr, LocalModes, OptionalActions};
        let Ok(saved) = tcgetattr(stdin) else {
            return NoEcho { saved: None };
        };
        let mut quiet = saved.clone();
        quiet.local_modes.remove(LocalModes::ECHO);
        match tcsetattr(stdin, OptionalActions::Drain, &quiet) {
            Ok(()) => NoEcho { saved: Some(saved) },
            Err(_) => NoEcho { saved: None },
        }
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        if let Some(t) = &self.saved {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Drain,
                t,
            );
        }
    }
}
