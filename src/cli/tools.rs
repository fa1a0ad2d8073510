//! `apphost tools ...`: the MCP servers `lime.tools` brokers (host-core `hosting::tools`):
//! add / list / remove servers, grant and revoke tools per app, set the secrets a server
//! needs (values from stdin, never shown), and call a tool on the host's own path.

use std::collections::BTreeMap;

use clap::Subcommand;
use serde_json::{json, Value};

use super::output;
use super::store_open::open_locked;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::hosting::tools::{
    registry, spec::secret_store_name, Approval, Broker, Caller, Invocation, ServerSpec, ToolRef,
    Transport,
};
use host_core::install::store::Store;

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// Add an MCP server: `apphost tools add <name> -- <command> [args...]` (stdio) or
    /// `apphost tools add <name> --url <url>` (streamable HTTP; loopback unless the admin policy
    /// allows more). The server is started once to list its tools.
    Add {
        name: String,
        #[arg(long)]
        url: Option<String>,
        /// A plain environment variable of a stdio server.
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// A header of an HTTP server.
        #[arg(long = "header", value_name = "NAME=VALUE")]
        header: Vec<String>,
        /// An environment variable whose value is the secret `<secret>` (`apphost tools secret set`).
        #[arg(long = "secret-env", value_name = "NAME=SECRET")]
        secret_env: Vec<String>,
        /// A header whose value is the secret `<secret>`.
        #[arg(long = "secret-header", value_name = "NAME=SECRET")]
        secret_header: Vec<String>,
        /// Per-call timeout (default 30000).
        #[arg(long = "timeout-ms")]
        timeout_ms: Option<u64>,
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// List the servers, their status and their tools with annotations (`--refresh` starts
    /// each server and lists its tools now; `--verbose` shows each server's stderr tail).
    List {
        #[arg(long)]
        refresh: bool,
        #[arg(long)]
        verbose: bool,
    },
    /// Remove a server the user added (and every app's grants of its tools).
    Remove { name: String },
    /// Grant an app a tool: `apphost tools grant <app> <server>/<tool>`.
    Grant { app: String, tool: String },
    /// Revoke a tool from an app.
    Revoke { app: String, tool: String },
    /// Call a tool as `app` on the host's own path; a destructive tool needs `--yes`.
    Call {
        app: String,
        tool: String,
        /// The arguments, a JSON object (default `{}`).
        arguments: Option<String>,
        #[arg(long)]
        yes: bool,
    },
    /// Set or unset a secret servers reference by name (the value from stdin, never shown).
    #[command(subcommand)]
    Secret(SecretCommand),
}

#[derive(Debug, Subcommand)]
pub enum SecretCommand {
    Set { name: String },
    Unset { name: String },
}

fn pairs(list: &[String], what: &str) -> HostResult<BTreeMap<String, String>> {
    list.iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| {
                    HostError::new(
                        ErrorCode::ToolsInvalid,
                        format!("{what} {p:?} is not NAME=VALUE"),
                    )
                })
        })
        .collect()
}

pub fn run(dir: &DataDir, cmd: ToolsCommand, json: bool) -> HostResult<i32> {
    match cmd {
        ToolsCommand::Add {
            name,
            url,
            env,
            header,
            secret_env,
            secret_header,
            timeout_ms,
            command,
        } => {
            let transport = match (url, command.split_first()) {
                (Some(url), None) if env.is_empty() && secret_env.is_empty() => Transport::Http {
                    url,
                    headers: pairs(&header, "--header")?,
                },
                (None, Some((cmd, args))) if header.is_empty() && secret_header.is_empty() => {
                    Transport::Stdio {
                        command: cmd.clone(),
                        args: args.to_vec(),
                        env: pairs(&env, "--env")?,
                    }
                }
                _ => {
                    return Err(HostError::new(
                        ErrorCode::ToolsInvalid,
                        "give either --url (with --header/--secret-header) or -- <command> [args...] (with --env/--secret-env)",
                    ))
                }
            };
            let mut secrets = pairs(&secret_env, "--secret-env")?;
            secrets.extend(pairs(&secret_header, "--secret-header")?);
            let spec = ServerSpec {
                transport,
                secrets,
                timeout_ms,
            };
            let store = open_locked(dir, json)?;
            let broker = Broker::new(dir)?;
            registry::add(&store, &broker.policy(), &name, &spec)?;
            let listed = broker.list_server(&store, &name);
            let tools = match &listed {
                Ok(t) => json!(t),
                Err(e) => {
                    output::note(
                        json,
                        &format!("added, but not reachable yet: [{}] {}", e.code, e.message),
                    );
                    Value::Null
                }
            };
            output::done(
                json,
                &format!(
                    "added MCP server {name}{}",
                    listed
                        .as_ref()
                        .map(|t| format!(" ({} tools)", t.len()))
                        .unwrap_or_default()
                ),
                &json!({"server": name, "added": true, "tools": tools,
                        "error": listed.as_ref().err().map(|e| e.code.as_str())}),
            );
            Ok(0)
        }
        ToolsCommand::List { refresh, verbose } => list(dir, refresh, verbose, json),
        ToolsCommand::Remove { name } => {
            let store = open_locked(dir, json)?;
            let broker = Broker::new(dir)?;
            registry::remove(&store, &broker.policy(), &name)?;
            output::done(
                json,
                &format!("removed MCP server {name}"),
                &json!({"server": name, "removed": true}),
            );
            Ok(0)
        }
        ToolsCommand::Grant { app, tool } => {
            let r = ToolRef::parse(&tool)?;
            let store = open_locked(dir, json)?;
            registry::grant(&store, &Broker::new(dir)?.policy(), &app, &r)?;
            output::done(
                json,
                &format!("granted {r} to {app}"),
                &json!({"app": app, "tool": r.to_string(), "granted": true}),
            );
            Ok(0)
        }
        ToolsCommand::Revoke { app, tool } => {
            let r = ToolRef::parse(&tool)?;
            let store = open_locked(dir, json)?;
            registry::revoke(&store, &app, &r)?;
            output::done(
                json,
                &format!("revoked {r} from {app}"),
                &json!({"app": app, "tool": r.to_string(), "granted": false}),
            );
            Ok(0)
        }
        ToolsCommand::Call {
            app,
            tool,
            arguments,
            yes,
        } => {
            let r = ToolRef::parse(&tool)?;
            let arguments: Value = match arguments {
                Some(text) => serde_json::from_str(&text).map_err(|e| {
                    HostError::new(
                        ErrorCode::ToolsInvalid,
                        format!("the arguments are not JSON: {e}"),
                    )
                })?,
                None => json!({}),
            };
            let store = Store::open(dir)?;
            let version = store
                .summary(
                    &app,
                    &host_core::foundation::profile::HostProfile::current(),
                )?
                .active_version;
            let broker = Broker::new(dir)?;
            let value = broker.invoke(
                &store,
                &Invocation {
                    app: &app,
                    version: Some(&version),
                    tool: &r,
                    arguments: &arguments,
                    caller: Caller::Host,
                    approval: if yes {
                        Approval::ByUser
                    } else {
                        Approval::NotAsked
                    },
                    declared: None,
                },
            )?;
            if json {
                output::print_json(&value);
            } else {
                for c in value["content"].as_array().into_iter().flatten() {
                    match c["text"].as_str() {
                        Some(t) => out_line!("{t}"),
                        None => out_line!("{c}"),
                    }
                }
            }
            Ok(if value["isError"] == Value::Bool(true) {
                1
            } else {
                0
            })
        }
        ToolsCommand::Secret(SecretCommand::Set { name }) => {
            let store_name = secret_store_name(&name);
            host_core::install::secrets::check_name(&store_name)?;
            let value = super::secrets::read_value(&name)?;
            let secrets = host_core::install::secrets::open_default(dir)?;
            secrets.set(&store_name, &value)?;
            output::done(
                json,
                &format!(
                    "set secret {name} (kept in the {})",
                    secrets.backend().as_str()
                ),
                &json!({"secret": name, "set": true}),
            );
            Ok(0)
        }
        ToolsCommand::Secret(SecretCommand::Unset { name }) => {
            let store_name = secret_store_name(&name);
            host_core::install::secrets::check_name(&store_name)?;
            let was = host_core::install::secrets::open_default(dir)?.delete(&store_name)?;
            output::done(
                json,
                &format!("unset secret {name}"),
                &json!({"secret": name, "unset": was}),
            );
            Ok(0)
        }
    }
}

fn list(dir: &DataDir, refresh: bool, verbose: bool, json: bool) -> HostResult<i32> {
    let store = Store::open(dir)?;
    let broker = Broker::new(dir)?;
    let policy = broker.policy();
    let servers = registry::servers(&store.settings()?, &policy);
    let mut rows = Vec::new();
    for (name, server) in &servers {
        let refreshed = refresh.then(|| broker.list_server(&store, name));
        let settings = store.settings()?;
        let tools = registry::listing(&settings, name);
        let status = broker.status(name);
        let mut row = json!({
            "server": name,
            "source": server.source.as_str(),
            "definition": server.spec.describe(),
            "status": status.state,
            "tools": tools,
        });
        if let Some(Err(e)) = &refreshed {
            row["error"] = json!({"code": e.code.as_str(), "message": e.message});
        }
        if verbose {
            row["stderrTail"] = json!(status.stderr_tail);
            row["stderrDropped"] = json!(status.stderr_dropped);
        }
        rows.push(row);
    }
    if let Some(why) = &policy.broken {
        output::note(
            json,
            &format!("the tools policy file cannot be used; every tool is denied: {why}"),
        );
    }
    if json {
        output::print_json(&json!({ "servers": rows }));
        return Ok(0);
    }
    if rows.is_empty() {
        out_line!("no MCP servers (apphost tools add <name> -- <command> [args...])");
    }
    for row in &rows {
        out_line!(
            "{} ({}, {}){}",
            row["server"].as_str().unwrap_or(""),
            row["source"].as_str().unwrap_or(""),
            row["status"].as_str().unwrap_or(""),
            row.get("error")
                .map(|e| format!(" error: {}", e["code"].as_str().unwrap_or("")))
                .unwrap_or_default()
        );
        for t in row["tools"].as_array().into_iter().flatten() {
            let mut marks = Vec::new();
            if t["readOnlyHint"] == Value::Bool(true) {
                marks.push("read-only");
            }
            if t["destructiveHint"] == Value::Bool(true) {
                marks.push("destructive");
            }
            out_line!(
                "  {:<24} {}{}",
                t["name"].as_str().unwrap_or(""),
                t["description"].as_str().unwrap_or(""),
                if marks.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", marks.join(", "))
                }
            );
        }
        if verbose {
            if let Some(tail) = row["stderrTail"].as_str().filter(|t| !t.is_empty()) {
                out_line!("  stderr:\n{tail}");
            }
        }
    }
    Ok(0)
}
