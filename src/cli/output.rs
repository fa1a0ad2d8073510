//! Rendering: JSON on stdout with `--json`, readable text otherwise. Progress and prompts go to
//! stderr so stdout stays parseable.

use std::io::IsTerminal;

use serde::Serialize;
use serde_json::Value;

use host_core::foundation::error::HostError;
use host_core::install::inspect::Inspection;
use host_core::install::readiness::{Outcome, Report};
use host_core::install::signature::{Trust, TrustedKey};
use host_core::install::store::{AppSummary, CleanupPlan, InstallPlan, VerifyReport};

static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--verbose`: text output shows hashes and every file an uninstall removes.
pub fn set_verbose(on: bool) {
    VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

fn verbose() -> bool {
    VERBOSE.load(std::sync::atomic::Ordering::Relaxed)
}

/// What an uninstall does with the app's data, in words.
pub fn data_mode_words(mode: host_core::install::store::DataMode) -> &'static str {
    match mode {
        host_core::install::store::DataMode::KeepData => "keeping its data",
        host_core::install::store::DataMode::DeleteData => "deleting its data",
        host_core::install::store::DataMode::ExportThenDelete => {
            "exporting its data, then deleting it"
        }
    }
}

/// A kind of data-area entry, in words.
pub fn entry_kind_words(kind: runtime_core::app_data::EntryKind) -> &'static str {
    use runtime_core::app_data::EntryKind as K;
    match kind {
        K::Symlink => "symbolic link",
        K::Fifo => "named pipe",
        K::Socket => "socket",
        K::BlockDevice => "block device",
        K::CharDevice => "character device",
        K::Directory => "folder",
        K::File => "file",
        K::Unknown => "unknown kind",
    }
}

/// A finding's place: `path` or `path:line`.
fn finding_place(f: &Value) -> String {
    let path = f["path"].as_str().unwrap_or("");
    match f["line"].as_u64() {
        Some(l) => format!("{path}:{l}"),
        None => path.to_owned(),
    }
}

/// One finding as text: `severity code place: message`, then `fix: …` when it says.
fn finding_lines(f: &Value) {
    out_line!(
        "  {} {} {}: {}",
        f["severity"].as_str().unwrap_or(""),
        f["code"].as_str().unwrap_or(""),
        finding_place(f),
        f["message"].as_str().unwrap_or("")
    );
    if let Some(fix) = f["fix"].as_str() {
        out_line!("      instead: {fix}");
    }
}

pub(super) fn print_json(v: &impl Serialize) {
    out_line!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into())
    );
}

/// One JSON value on one line (a stream of events, e.g. `apphost dev --json`).
pub(super) fn print_json_line(v: &impl Serialize) {
    out_line!(
        "{}",
        serde_json::to_string(v).unwrap_or_else(|_| "null".into())
    );
}

pub fn print_error(err: &HostError, json: bool) {
    if json {
        err_line!(
            "{}",
            serde_json::to_string(&serde_json::json!({ "error": err })).unwrap_or_default()
        );
    } else {
        err_line!("error[{}]: {}", err.code, err.message);
        if let Some(r) = err.details.get("remediation").and_then(Value::as_str) {
            err_line!("  hint: {r}");
        }
        if let Some(Value::Array(findings)) = err.details.get("findings") {
            for f in findings.iter().filter(|f| f["severity"] == "error") {
                err_line!(
                    "  - {} ({}): {}",
                    f["code"].as_str().unwrap_or(""),
                    f["path"].as_str().unwrap_or(""),
                    f["message"].as_str().unwrap_or("")
                );
            }
        }
    }
}

/// Warnings of an operation that succeeded (in JSON they are part of its result).
pub fn warnings(json: bool, warnings: &[HostError]) {
    if !json {
        for w in warnings {
            err_line!("warning[{}]: {}", w.code, w.message);
        }
    }
}

pub fn note(json: bool, text: &str) {
    if !json {
        err_line!("note: {text}");
    }
}

pub fn done(json: bool, text: &str, value: &Value) {
    if json {
        print_json(value);
    } else {
        out_line!("{text}");
    }
}

/// A progress bar on a terminal; silent otherwise.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    label: &'static str,
}

impl Progress {
    pub fn new(label: &'static str, json: bool) -> Self {
        let _ = json;
        Progress { bar: None, label }
    }

    pub fn update(&mut self, done: u64, total: u64) {
        if self.bar.is_none() && total >= 8 * 1024 * 1024 && std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{msg} {bar:40} {bytes}/{total_bytes} {bytes_per_sec}",
            ) {
                bar.set_style(style);
            }
            bar.set_message(self.label);
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

fn trust_label(t: Trust) -> &'static str {
    match t {
        Trust::Trusted => "signed by a trusted publisher",
        Trust::UnknownKey => "SIGNED BY AN UNKNOWN KEY — installs only in sideload mode",
        Trust::Unsigned => "UNSIGNED — installs only in sideload mode",
    }
}

pub fn list(apps: &[AppSummary], json: bool) {
    if json {
        print_json(&apps);
        return;
    }
    if apps.is_empty() {
        out_line!("No apps installed. Install one with: apphost install <package>");
        return;
    }
    for a in apps {
        let mut flags = Vec::new();
        if a.dev {
            flags.push("DEV".to_owned());
        }
        if !a.enabled {
            flags.push("disabled".to_owned());
        }
        if a.sideloaded {
            flags.push(format!("sideloaded, {}", a.trust));
        }
        let flags = if flags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", flags.join("; "))
        };
        out_line!(
            "{:<28} {:<12} {:<15}{}",
            a.name,
            a.active_version,
            a.readiness,
            flags
        );
        if let Some(d) = &a.display_name {
            out_line!("    {d}");
        }
    }
}

fn check_symbol(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "ok",
        Outcome::Notice => "note",
        Outcome::Unknown => "??",
        Outcome::Degraded => "degraded",
        Outcome::NeedsSetup => "setup",
        Outcome::Blocked => "BLOCKED",
    }
}

fn readiness_text(r: &Report) {
    out_line!("Readiness: {}", r.status.as_str());
    for c in r.checks.iter().filter(|c| c.outcome != Outcome::Pass) {
        let entry = c
            .entry
            .as_deref()
            .map(|e| format!(" [{e}]"))
            .unwrap_or_default();
        out_line!(
            "  {:<9} {} {}{}: {}",
            check_symbol(c.outcome),
            c.kind,
            c.key,
            entry,
            c.message
        );
        if let Some(r) = &c.remediation {
            out_line!("            fix: {r}");
        }
    }
    let passed = r
        .checks
        .iter()
        .filter(|c| c.outcome == Outcome::Pass)
        .count();
    if passed > 0 {
        out_line!("  ({passed} check(s) passed)");
    }
    for a in &r.setup_actions {
        match &a.description {
            Some(d) => out_line!("  setup: {} ({}): {d}", a.title, a.kind),
            None => out_line!("  setup: {} ({})", a.title, a.kind),
        }
    }
    if !r.entries.is_empty() {
        let e: Vec<String> = r
            .entries
            .iter()
            .map(|e| format!("{}={}", e.entry_key, e.status.as_str()))
            .collect();
        out_line!("  entries: {}", e.join(", "));
    }
}

pub fn readiness(r: &Report, json: bool) {
    if json {
        print_json(&r.to_json());
    } else {
        readiness_text(r);
    }
}

pub fn inspection(i: &Inspection, json: bool) {
    if json {
        print_json(&i.summary());
        return;
    }
    let m = &i.manifest;
    out_line!(
        "{} {}{}",
        m.name(),
        m.version(),
        m.view()
            .display_name()
            .map(|d| format!(" — {d}"))
            .unwrap_or_default()
    );
    out_line!("  {}", m.view().description().unwrap_or_default());
    out_line!("Source:    {} {}", i.source.origin, i.source.path.display());
    out_line!(
        "Trust:     {}{}",
        trust_label(i.signature.trust),
        i.signature
            .key_id
            .as_deref()
            .map(|k| format!(" ({k})"))
            .unwrap_or_default()
    );
    out_line!(
        "Package:   {} files, {} bytes{}",
        i.read.files.len(),
        i.read.total_bytes,
        if verbose() {
            format!(", {}", i.read.package_hash)
        } else {
            String::new()
        }
    );
    if verbose() {
        out_line!(
            "Manifest:  {} (manifestVersion {})",
            i.manifest_hash,
            m.manifest_version
        );
    }
    let p = &i.projection;
    out_line!("Would add:");
    for e in p["entries"].as_array().into_iter().flatten() {
        let binding = ["route", "panel", "command", "workflow", "persona"]
            .iter()
            .find_map(|k| e[*k].as_str())
            .unwrap_or("");
        out_line!(
            "  entry      {} ({} {binding}) {}",
            e["key"].as_str().unwrap_or("?"),
            e["kind"].as_str().unwrap_or("?"),
            e["title"].as_str().unwrap_or("")
        );
    }
    for perm in i.permissions() {
        let req = if perm["required"] == Value::Bool(true) {
            "required"
        } else {
            "optional"
        };
        let domains: Vec<&str> = perm["domains"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let domains = if domains.is_empty() {
            String::new()
        } else {
            format!(" — domains: {}", domains.join(", "))
        };
        out_line!(
            "  permission {} [{req}] {} {}{domains}{}",
            perm["key"].as_str().unwrap_or("?"),
            perm["scope"].as_str().unwrap_or("?"),
            perm["access"].as_str().unwrap_or(""),
            perm["reason"]
                .as_str()
                .map(|r| format!(" — {r}"))
                .unwrap_or_default()
        );
    }
    let storage = &p["storage"];
    if let Some(ns) = storage["namespace"].as_str() {
        // Each with the start of its SHA-256: only these bytes will ever run.
        let migrations: Vec<String> = storage["plannedMigrations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| {
                let sha = m["sha256"].as_str().unwrap_or_default();
                m["path"]
                    .as_str()
                    .map(|p| format!("{p} (sha256 {})", sha.get(..12).unwrap_or(sha)))
            })
            .collect();
        out_line!(
            "  storage    namespace {ns}; migrations: {}",
            if migrations.is_empty() {
                "none".into()
            } else {
                migrations.join(", ")
            }
        );
    }
    for (key, label) in [
        ("services", "service"),
        ("workflows", "workflow"),
        ("knowledgeTemplates", "knowledge"),
        ("toolRequirements", "tool"),
        ("secrets", "secret"),
        ("artifactTypes", "artifact"),
    ] {
        for item in p[key].as_array().into_iter().flatten() {
            out_line!(
                "  {label:<10} {}",
                item["key"].as_str().or(item["id"].as_str()).unwrap_or("?")
            );
        }
    }
    out_line!(
        "  install    modes: {}",
        p["installModes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    );
    readiness_text(&i.readiness);
    let warnings: Vec<_> = m
        .findings
        .iter()
        .filter(|f| f.severity != host_core::install::manifest::Severity::Error)
        .collect();
    let errors: Vec<_> = m
        .findings
        .iter()
        .filter(|f| f.severity == host_core::install::manifest::Severity::Error)
        .collect();
    for f in errors.iter().chain(warnings.iter()) {
        finding_lines(&serde_json::to_value(f).unwrap_or_default());
    }
    if let Some(e) = i.install_blocker(true) {
        out_line!("Cannot be installed: {}", e.message);
    }
}

/// Why the app cannot run here yet, when readiness is `needs-setup` or `blocked` (shown before
/// the install question): the blocking or setup checks, in a few words each.
pub fn not_ready_yet(r: &Report) -> Option<String> {
    // `ready-degraded` runs (with less); `needs-setup` and `blocked` do not.
    if !matches!(r.status.as_str(), "needs-setup" | "blocked") {
        return None;
    }
    let why: Vec<String> = r
        .checks
        .iter()
        .filter(|c| {
            matches!(
                c.outcome,
                Outcome::Blocked | Outcome::NeedsSetup | Outcome::Unknown
            )
        })
        .take(3)
        .map(|c| c.message.clone())
        .collect();
    Some(if why.is_empty() {
        format!("it cannot run here yet (readiness {})", r.status.as_str())
    } else {
        format!(
            "it cannot run here yet (readiness {}): {}",
            r.status.as_str(),
            why.join("; ")
        )
    })
}

pub fn plan(p: &InstallPlan) {
    if let Some(from) = p.from_version() {
        out_line!("Update {} {} -> {}", p.app(), from, p.version());
    }
    publisher(p);
    let changed: Vec<_> = p
        .permissions()
        .iter()
        .filter(|c| c.change != "unchanged")
        .collect();
    if p.from_version().is_some() {
        if changed.is_empty() {
            out_line!("Permissions: unchanged");
        }
        for c in changed {
            let grant = match c.grant {
                "asked" => "consent asked now",
                "at-first-use" => "not granted; asked at first use",
                "dropped" => "grant dropped",
                _ => "",
            };
            out_line!(
                "  permission {} {} ({}){}",
                c.change,
                c.key,
                if c.required { "required" } else { "optional" },
                if grant.is_empty() {
                    String::new()
                } else {
                    format!(": {grant}")
                }
            );
            for f in &c.fields {
                out_line!("      {}: {} -> {}", f.field, f.old, f.new);
            }
        }
    }
    if p.existing_data() {
        out_line!(
            "Data from an earlier install of {} will be used again{}.",
            p.app(),
            if p.publisher().status == "same" {
                " (same publisher)"
            } else {
                ""
            }
        );
    }
    if !p.prunes().is_empty() {
        out_line!("Removes old version(s): {}", p.prunes().join(", "));
    }
}

/// The signer of the new version, and the pinned one when it differs.
fn publisher(p: &InstallPlan) {
    let pc = p.publisher();
    match pc.status {
        "changed" | "unknown" => {
            out_line!("WARNING: the publisher changed.");
            out_line!(
                "  old signer: {}",
                pc.old
                    .as_ref()
                    .map_or_else(|| "not recorded".to_owned(), |o| o.describe())
            );
            out_line!("  new signer: {}", pc.new.describe());
            if pc.accepted {
                out_line!("  accepted with --accept-new-publisher");
            }
        }
        "signed" => {
            out_line!(
                "Signer: {} (earlier versions were unsigned)",
                pc.new.describe()
            )
        }
        _ => out_line!("Signer: {}", pc.new.describe()),
    }
}

pub fn validate(report: &Value, json: bool) {
    if json {
        print_json(report);
        return;
    }
    let findings: Vec<&Value> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let count = |sev: &str| findings.iter().filter(|f| f["severity"] == sev).count();
    let (errors, warnings) = (count("error"), count("warning"));
    let app = report["app"]
        .as_str()
        .or_else(|| report["error"]["details"]["app"].as_str())
        .unwrap_or("package");
    let version = report["version"]
        .as_str()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    out_line!(
        "{app}{version}: {} ({errors} error(s), {warnings} warning(s))",
        report["status"].as_str().unwrap_or("")
    );
    for f in &findings {
        finding_lines(f);
    }
    if let Some(e) = report["error"].as_object() {
        out_line!(
            "  error {}: {}",
            e["code"].as_str().unwrap_or(""),
            e["message"].as_str().unwrap_or("")
        );
        for (what, key) in [
            ("changed", "changed"),
            ("not listed in the lock", "notListed"),
            ("missing", "missing"),
        ] {
            let files: Vec<&str> = e["details"][key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if !files.is_empty() {
                out_line!("      {what}: {}", files.join(", "));
            }
        }
    }
    if verbose() {
        if let Some(h) = report["packageHash"].as_str() {
            out_line!(
                "  packageHash  {h}\n  manifestHash {}",
                report["manifestHash"].as_str().unwrap_or("")
            );
        }
    }
}

pub fn verify(r: &VerifyReport, json: bool) {
    if json {
        print_json(r);
        return;
    }
    for rec in &r.recovered {
        out_line!(
            "recovered: {} {} ({})",
            rec.kind,
            rec.app.as_deref().unwrap_or(""),
            rec.action
        );
        for q in &rec.quarantined {
            out_line!(
                "  quarantined: {} ({}); kept in {}",
                q.original,
                q.reason,
                q.path
            );
        }
    }
    out_line!(
        "{} app(s), {} version(s), {} file(s) checked, {} bytes rehashed",
        r.apps,
        r.versions,
        r.blobs,
        r.bytes_hashed
    );
    if r.ok {
        out_line!("store is consistent");
    }
    for p in &r.problems {
        out_line!("  problem {}: {}", p.code, p.message);
    }
}

pub fn cleanup_plan(p: &CleanupPlan, json: bool) {
    if json {
        print_json(p);
        return;
    }
    out_line!(
        "Uninstalling {}, {}, would remove:",
        p.app,
        data_mode_words(p.mode)
    );
    out_line!(
        "  version(s) {}: {} package file(s), {} bytes",
        p.versions.join(", "),
        p.blobs_removed.len(),
        p.blob_bytes_removed
    );
    if !p.data_files_removed.is_empty() || p.data_listing_truncated {
        out_line!(
            "  data: {} file(s), {} bytes in {}",
            p.data_file_count,
            p.data_bytes,
            p.data_dir
        );
    }
    if !verbose() {
        let rows: i64 = p.rows.iter().map(|r| r.rows).sum();
        out_line!("  {rows} host record(s) (grants, settings, history); --verbose lists every file and record");
    }
    if verbose() {
        for r in &p.rows {
            out_line!("  host.db {:<14} {:>6} row(s)  {}", r.table, r.rows, r.what);
        }
        for b in &p.blobs_removed {
            out_line!("    sha256:{}  {}", b.blob, b.paths.join(", "));
        }
        for f in &p.pack_files_removed {
            out_line!("  pack file {} ({} bytes)", f.file, f.size);
        }
    }
    if p.blobs_shared > 0 {
        out_line!("  ({} file(s) shared with other apps stay)", p.blobs_shared);
    }
    for f in p.data_files_removed.iter().filter(|_| verbose()) {
        out_line!("  data {}/{} ({} bytes)", p.data_dir, f.path, f.size);
    }
    if p.data_listing_truncated {
        out_line!(
            "  (listing cut short: {} data file(s), {} bytes in all)",
            p.data_file_count,
            p.data_bytes
        );
    }
    for s in &p.data_entries_skipped {
        out_line!(
            "  not a regular file, never exported or followed: {}/{} ({}: {})",
            p.data_dir,
            s.path,
            entry_kind_words(s.kind),
            s.reason
        );
    }
    for r in &p.retained {
        out_line!("Kept: {r}");
    }
}

pub fn audit(rows: &[Value], json: bool) {
    if json {
        print_json(&rows);
        return;
    }
    for r in rows {
        out_line!(
            "{} {:<10} {} {}",
            r["at"].as_str().unwrap_or(""),
            r["action"].as_str().unwrap_or(""),
            r["app"].as_str().unwrap_or("-"),
            r["version"].as_str().unwrap_or("")
        );
    }
}

pub fn trusted(keys: &[TrustedKey], json: bool) {
    if json {
        print_json(&keys);
        return;
    }
    if keys.is_empty() {
        out_line!("No trusted publisher keys. Add one with: apphost trust add <key.pub.json>");
    }
    for k in keys {
        out_line!("{}  {}  {}", k.key_id, k.public_key, k.name);
    }
}
