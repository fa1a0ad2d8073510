//! Asking the user on a terminal.

use std::io::{BufRead, IsTerminal, Write};

use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::install::store::InstallPlan;

pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

pub fn confirm(question: &str) -> HostResult<bool> {
    let mut err = std::io::stderr();
    let _ = write!(err, "{question} [y/N] ");
    let _ = err.flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| {
        HostError::new(
            ErrorCode::InstallConsentRequired,
            format!("cannot read the answer: {e}"),
        )
    })?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

pub fn consent_question(plan: &InstallPlan) -> String {
    let verb = match plan.mode() {
        host_core::install::store::InstallMode::Install => "Install",
        host_core::install::store::InstallMode::Update => "Update to",
    };
    let mut q = format!("{verb} {} {}", plan.app(), plan.version());
    if plan.sideload() {
        q.push_str(&format!(" ({}; sideloaded)", plan.trust().to_uppercase()));
    }
    let p = plan.publisher();
    if p.needs_acceptance() {
        q.push_str(&format!(" from a NEW PUBLISHER ({})", p.new.describe()));
    }
    if !plan.needs_consent().is_empty() {
        q.push_str(&format!(" and grant {}", plan.needs_consent().join(", ")));
    }
    if plan.mode() == host_core::install::store::InstallMode::Install && plan.existing_data() {
        q.push_str(" and reattach the data kept from its earlier install");
    }
    q.push('?');
    q
}
