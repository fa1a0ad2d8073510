//! What a server is (a stdio command or a streamable-HTTP URL) and how a tool is named
//! (`<server>/<tool>`), checked before anything is stored or spawned.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::setting_keys::check_tool_server_name;

/// Most arguments, environment variables or headers of one server.
pub const MAX_LIST: usize = 64;
/// Longest command, argument, URL, variable or header value.
pub const MAX_TEXT: usize = 4096;

/// How the host reaches a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "camelCase")]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout, started on demand.
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        /// Plain environment variables.
        #[serde(default)]
        env: BTreeMap<String, String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

/// One MCP server definition, as stored in `tools.server.<name>` or the admin policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerSpec {
    #[serde(flatten)]
    pub transport: Transport,
    /// Environment variables (stdio) or headers (HTTP) whose value is the secret-store entry
    /// `tools/<secret name>`: `NAME -> secret name`. Resolved at spawn, never stored or shown.
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
    /// Per-call timeout in milliseconds (default [`DEFAULT_TIMEOUT_MS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;

fn invalid(message: impl Into<String>) -> HostError {
    HostError::new(ErrorCode::ToolsInvalid, message)
}

fn check_text(what: &str, v: &str) -> HostResult<()> {
    if v.len() > MAX_TEXT || v.contains('\0') {
        return Err(invalid(format!(
            "{what} is over {MAX_TEXT} bytes or holds a NUL"
        )));
    }
    Ok(())
}

fn check_var_name(what: &str, name: &str) -> HostResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(invalid(format!("{what} {name:?} is not a valid name")))
    }
}

/// The secret-store name a server's secret is kept under.
pub fn secret_store_name(secret: &str) -> String {
    format!("tools/{secret}")
}

impl ServerSpec {
    /// Checks every field; `allow_remote` lets an HTTP server be other than loopback
    /// (admin policy `allowRemoteUrls`).
    pub fn check(&self, allow_remote: bool) -> HostResult<()> {
        match &self.transport {
            Transport::Stdio { command, args, env } => {
                if command.trim().is_empty() {
                    return Err(invalid("a stdio server needs a command"));
                }
                check_text("the command", command)?;
                if args.len() > MAX_LIST || env.len() > MAX_LIST {
                    return Err(invalid(format!(
                        "at most {MAX_LIST} arguments and variables"
                    )));
                }
                for a in args {
                    check_text("an argument", a)?;
                }
                for (k, v) in env {
                    check_var_name("the variable", k)?;
                    check_text("a variable's value", v)?;
                }
            }
            Transport::Http { url, headers } => {
                check_url(url, allow_remote)?;
                if headers.len() > MAX_LIST {
                    return Err(invalid(format!("at most {MAX_LIST} headers")));
                }
                for (k, v) in headers {
                    check_var_name("the header", k)?;
                    check_text("a header's value", v)?;
                }
            }
        }
        if self.secrets.len() > MAX_LIST {
            return Err(invalid(format!("at most {MAX_LIST} secrets")));
        }
        for (k, secret) in &self.secrets {
            check_var_name("the secret variable", k)?;
            crate::install::secrets::check_name(&secret_store_name(secret))
                .map_err(|_| invalid(format!("{secret:?} is not a valid secret name")))?;
        }
        if let Some(t) = self.timeout_ms {
            if t == 0 || t > MAX_TIMEOUT_MS {
                return Err(invalid(format!(
                    "the timeout must be 1 to {MAX_TIMEOUT_MS} ms"
                )));
            }
        }
        Ok(())
    }

    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS))
    }

    /// What `tools list` shows: the definition with secret *names* only (never values).
    pub fn describe(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// An `http(s)` URL; loopback hosts only unless `allow_remote`.
pub fn check_url(url: &str, allow_remote: bool) -> HostResult<()> {
    check_text("the URL", url)?;
    let parsed = url::Url::parse(url).map_err(|e| invalid(format!("{url:?}: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("an MCP server URL must be http or https"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(invalid(
            "put credentials in a --secret-header, not in the URL",
        ));
    }
    let loopback = match parsed.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    };
    if !loopback && !allow_remote {
        return Err(invalid(
            "only loopback MCP server URLs are allowed (the admin policy's allowRemoteUrls allows others)",
        ));
    }
    Ok(())
}

/// A tool named `<server>/<tool>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolRef {
    pub server: String,
    pub tool: String,
}

impl ToolRef {
    pub fn parse(s: &str) -> HostResult<ToolRef> {
        let (server, tool) = s
            .split_once('/')
            .ok_or_else(|| invalid(format!("{s:?} is not <server>/<tool>")))?;
        check_tool_server_name(server).map_err(invalid)?;
        let tool_ok = !tool.is_empty()
            && tool.len() <= 128
            && tool
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
        if !tool_ok {
            return Err(invalid(format!("{tool:?} is not a valid tool name")));
        }
        Ok(ToolRef {
            server: server.to_owned(),
            tool: tool.to_owned(),
        })
    }
}

impl std::fmt::Display for ToolRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.server, self.tool)
    }
}

/// One tool a server lists, as the host keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub input_schema: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_loopback_unless_the_policy_allows_more() {
        assert!(check_url("http://127.0.0.1:8080/mcp", false).is_ok());
        assert!(check_url("http://localhost/mcp", false).is_ok());
        assert!(check_url("http://[::1]/mcp", false).is_ok());
        assert_eq!(
            check_url("https://example.com/mcp", false)
                .unwrap_err()
                .code,
            ErrorCode::ToolsInvalid
        );
        assert!(check_url("https://example.com/mcp", true).is_ok());
        assert!(check_url("file:///etc/passwd", true).is_err());
        assert!(check_url("http://u:p@127.0.0.1/", true).is_err());
    }

    #[test]
    fn tool_refs_are_server_slash_tool() {
        let r = ToolRef::parse("notes/echo").unwrap();
        assert_eq!((r.server.as_str(), r.tool.as_str()), ("notes", "echo"));
        for bad in [
            "echo",
            "/echo",
            "notes/",
            "Notes/echo",
            "notes/e cho",
            "a/b/c",
        ] {
            assert!(ToolRef::parse(bad).is_err(), "{bad}");
        }
    }
}
