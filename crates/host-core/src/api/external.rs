//! `open_external {url}`: opening a link after the user confirmed it in the host UI.
//!
//! Only absolute `http`/`https` URLs with a host and without credentials are accepted (checked
//! here, whatever the host UI sent). Then the session's [`LinkOpener`] acts: the desktop hands
//! the URL to a program (the shell's `xdg-open`) and answers `null`; the browser mode answers
//! `{url}` and the page opens it itself.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

use super::session::LinkOpener;
use super::{answer, args, Command, Session};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

pub const COMMANDS: &[Command] = &[Command {
    name: "open_external",
    run: open_external,
}];

/// Longest URL accepted.
pub const MAX_URL_BYTES: usize = 8192;

/// Checks `raw` and returns it as a URL that may be opened.
pub fn validate(raw: &str) -> Result<Url, HostError> {
    let invalid = |why: &str| {
        HostError::new(
            ErrorCode::ExternalInvalidUrl,
            format!("cannot open this link: {why}"),
        )
        .with("url", raw.chars().take(512).collect::<String>())
    };
    if raw.len() > MAX_URL_BYTES || raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(invalid(
            "it is too long or contains spaces or control characters",
        ));
    }
    let url = Url::parse(raw).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("only http and https links can be opened"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("the link has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid("links with credentials are not opened"));
    }
    Ok(url)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "OpenExternalArgs")]
pub(crate) struct Link {
    url: String,
}

fn open_external(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Link = args("open_external", raw)?;
    let url = validate(&a.url)?;
    match &session.config.links {
        LinkOpener::Program(open) => {
            open(url.as_str())?;
            answer(Value::Null)
        }
        LinkOpener::Page => answer(OpenedUrl {
            url: url.as_str().to_owned(),
        }),
    }
}

/// `open_external`'s answer in the browser: the checked URL, for the page to open itself (the
/// desktop answers `null`: it opened the link).
#[derive(Serialize, schemars::JsonSchema)]
pub struct OpenedUrl {
    pub url: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_links_with_a_host_are_opened() {
        for ok in [
            "https://notes.example.com/a?b=c#d",
            "http://example.com",
            "HTTPS://Example.com/",
        ] {
            assert!(validate(ok).is_ok(), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,hi",
            "agentapp://other-app/",
            "tauri://localhost/",
            "ftp://example.com/",
            "https://",
            "https://user:pw@example.com/",
            "https://exa mple.com/",
            "https://example.com/\n",
            "/relative",
            "",
        ] {
            let e = validate(bad).expect_err(bad);
            assert_eq!(e.code.as_str(), "external.invalid_url", "{bad}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert_eq!(
            validate(&long).unwrap_err().code,
            ErrorCode::ExternalInvalidUrl
        );
    }
}
