//! The `apphost` command line. Every command takes `--json`; errors are `{code, message,
//! details}` and map to documented exit codes (`docs/cli.md`).
//!
//! Architecture invariant: no domain logic here. Commands parse arguments, call host-core,
//! ask for consent on a terminal, and render results.

/// `println!` that never panics: a closed pipe (`apphost list --json | head`) is not an error.
macro_rules! out_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that never panics.
macro_rules! err_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod app_server;
mod app_server_relay;
mod args;
mod author;
mod catalog;
mod catalog_install;
mod commands;
mod dev;
mod files;
mod grants;
mod install_run;
mod knowledge;
mod model;
mod output;
mod prompt;
mod records;
mod secrets;
mod services;
mod store_open;
mod tools;
mod workflow;
mod workflow_door;

use std::ffi::OsString;

use clap::Parser;

pub use args::Cli;
use host_core::foundation::error::{ErrorCode, HostError};

/// Runs the CLI with `argv` (including the program name) and returns the exit code.
pub fn run(argv: Vec<OsString>) -> i32 {
    let json_requested = argv.iter().any(|a| a == "--json");
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    2
                } else {
                    0
                };
            }
            let err = HostError::new(ErrorCode::CliUsage, e.to_string().trim().to_owned());
            if json_requested {
                output::print_error(&err, true);
            } else {
                let _ = e.print();
            }
            return 2;
        }
    };
    init_tracing();
    let json = cli.json;
    output::set_verbose(cli.verbose);
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            output::print_error(&err, json);
            err.code.class().exit_code()
        }
    }
}

fn init_tracing() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("APPHOST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .without_time()
        .with_target(false)
        .try_init();
}
