//! `check_update`: whether a newer AppHost exists, from the signed update feed
//! (`center/host_update.rs`, docs/shipping.md). The host UI asks once, after its first paint;
//! the answer is a notice, never an install.

use serde_json::Value;

use super::{answer, args, Command, NoArgs, Session};
use crate::center::host_update::{self, CHECK_TIMEOUT};
use crate::foundation::error::HostResult;

pub const COMMANDS: &[Command] = &[Command {
    name: "check_update",
    run: check_update,
}];

/// The package link a notice falls back to when the feed has no `downloadPage`.
fn platform() -> &'static str {
    if std::path::Path::new("/etc/debian_version").exists() {
        "linux-x86_64-deb"
    } else {
        "linux-x86_64-rpm"
    }
}

fn check_update(_session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("check_update", raw)?;
    answer(host_update::status(
        host_update::compiled_key(),
        host_update::endpoint(|k| std::env::var(k).ok()),
        env!("CARGO_PKG_VERSION"),
        platform(),
        CHECK_TIMEOUT,
    ))
}
