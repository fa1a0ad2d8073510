//! The `Content-Security-Policy` of every app response, built from the manifest and the grants.
//!
//! Default deny. Scripts, styles, images, fonts, media and workers come from the app's own
//! origin, named explicitly (never `'self'`: in WebKit an opaque-origin document's `'self'` does
//! not match its own URL). `connect-src` lists the app's origin plus only the network domains the
//! manifest declares AND the user granted. `'unsafe-eval'` and inline styles only when the manifest
//! declares them (`ui.frame`). Nothing may frame the app but the host UI (`frame-ancestors`); the
//! app may frame nothing, submit forms nowhere (unless it declares forms, then only to itself),
//! and cannot change its base URL.
//!
//! Domains are package input: anything that is not a plain host name (optionally `*.`-prefixed,
//! optionally with a port) is dropped and reported, so a domain such as
//! `example.com; script-src *` can never inject a directive.

use serde::Serialize;

use crate::install::manifest::{FrameFlag, ManifestView};

/// Frame options an app declares under `ui.frame` (an AppHost extension; `ui` allows extra keys).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameOptions {
    /// `ui.frame.forms: true` → `allow-forms` and `form-action <app origin>`.
    pub forms: bool,
    /// `ui.frame.downloads: true` → `allow-downloads`.
    pub downloads: bool,
    /// `ui.frame.unsafeEval: true` → `'unsafe-eval'` in `script-src`.
    pub unsafe_eval: bool,
    /// `ui.frame.inlineStyles: true` → `'unsafe-inline'` in `style-src`.
    pub inline_styles: bool,
}

impl FrameOptions {
    /// Reads `ui.frame` from a manifest's data; absent or non-boolean values are `false`.
    pub fn from_manifest(data: &serde_json::Map<String, serde_json::Value>) -> FrameOptions {
        let ui = ManifestView::new(data).ui();
        FrameOptions {
            forms: ui.frame_flag(FrameFlag::Forms),
            downloads: ui.frame_flag(FrameFlag::Downloads),
            unsafe_eval: ui.frame_flag(FrameFlag::UnsafeEval),
            inline_styles: ui.frame_flag(FrameFlag::InlineStyles),
        }
    }

    /// The iframe `sandbox` attribute for this app: never top navigation, never popups.
    pub fn sandbox_attribute(&self) -> String {
        let mut s = String::from("allow-scripts allow-same-origin");
        if self.forms {
            s.push_str(" allow-forms");
        }
        if self.downloads {
            s.push_str(" allow-downloads");
        }
        s
    }
}

/// What the policy is built from.
#[derive(Debug, Clone)]
pub struct CspInput<'a> {
    /// The app's own origin, e.g. `agentapp://hello-app`.
    pub app_origin: &'a str,
    /// Origins allowed to frame the app (the host UI's), e.g. `tauri://localhost`.
    pub frame_ancestors: &'a [String],
    /// Declared network domains that the user granted.
    pub connect_domains: &'a [String],
    pub frame: FrameOptions,
}

/// The built header value and the domains that were dropped as malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Csp {
    pub header: String,
    pub rejected_domains: Vec<String>,
}

pub fn build(input: &CspInput<'_>) -> Csp {
    let origin = input.app_origin;
    let mut connect = vec![origin.to_owned()];
    let mut rejected = Vec::new();
    for d in input.connect_domains {
        match normalize_domain(d) {
            Some(host) => {
                for scheme in ["https", "wss"] {
                    let src = format!("{scheme}://{host}");
                    if !connect.contains(&src) {
                        connect.push(src);
                    }
                }
            }
            None => rejected.push(d.clone()),
        }
    }
    let ancestors: Vec<&str> = input
        .frame_ancestors
        .iter()
        .map(String::as_str)
        .filter(|a| is_origin_token(a))
        .collect();
    let ancestors = if ancestors.is_empty() {
        "'none'".to_owned()
    } else {
        ancestors.join(" ")
    };
    let script = if input.frame.unsafe_eval {
        format!("{origin} 'unsafe-eval'")
    } else {
        origin.to_owned()
    };
    let style = if input.frame.inline_styles {
        format!("{origin} 'unsafe-inline'")
    } else {
        origin.to_owned()
    };
    let form_action = if input.frame.forms {
        origin.to_owned()
    } else {
        "'none'".to_owned()
    };
    let header = [
        "default-src 'none'".to_owned(),
        format!("script-src {script}"),
        format!("style-src {style}"),
        format!("img-src {origin} data: blob:"),
        format!("font-src {origin} data:"),
        format!("media-src {origin} blob:"),
        format!("worker-src {origin} blob:"),
        format!("connect-src {}", connect.join(" ")),
        "frame-src 'none'".to_owned(),
        "child-src 'none'".to_owned(),
        "object-src 'none'".to_owned(),
        "manifest-src 'none'".to_owned(),
        "base-uri 'none'".to_owned(),
        format!("form-action {form_action}"),
        format!("frame-ancestors {ancestors}"),
    ]
    .join("; ");
    Csp {
        header,
        rejected_domains: rejected,
    }
}

/// A domain as a CSP host source: `example.com`, `*.example.com`, `api.example.com:8443`;
/// lowercased. `None` for anything else (schemes, paths, spaces, quotes, `;`, `,`, IP literals
/// with brackets, empty labels, a bare `*`).
pub fn normalize_domain(raw: &str) -> Option<String> {
    let d = raw.trim().to_ascii_lowercase();
    let (host, port) = match d.rsplit_once(':') {
        Some((h, p)) => {
            if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (h, Some(p))
        }
        None => (d.as_str(), None),
    };
    let (wild, rest) = match host.strip_prefix("*.") {
        Some(r) => (true, r),
        None => (false, host),
    };
    if rest.is_empty() || rest.len() > 253 {
        return None;
    }
    let labels_ok = rest.split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    });
    if !labels_ok {
        return None;
    }
    // A wildcard needs at least a registrable-looking suffix (`*.com` is refused).
    if wild && !rest.contains('.') {
        return None;
    }
    let mut out = String::new();
    if wild {
        out.push_str("*.");
    }
    out.push_str(rest);
    if let Some(p) = port {
        out.push(':');
        out.push_str(p);
    }
    Some(out)
}

fn is_origin_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b':' | b'/' | b'.' | b'-' | b'[' | b']')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directive<'a>(csp: &'a str, name: &str) -> &'a str {
        csp.split("; ")
            .find(|d| d.split(' ').next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in {csp}"))
    }

    fn host() -> Vec<String> {
        vec!["tauri://localhost".to_owned()]
    }

    #[test]
    fn default_policy_denies_everything_but_the_apps_own_origin() {
        let csp = build(&CspInput {
            app_origin: "agentapp://hello-app",
            frame_ancestors: &host(),
            connect_domains: &[],
            frame: FrameOptions::default(),
        })
        .header;
        assert!(csp.starts_with("default-src 'none'; "));
        assert_eq!(
            directive(&csp, "script-src"),
            "script-src agentapp://hello-app"
        );
        assert_eq!(
            directive(&csp, "connect-src"),
            "connect-src agentapp://hello-app"
        );
        assert_eq!(
            directive(&csp, "frame-ancestors"),
            "frame-ancestors tauri://localhost"
        );
        assert_eq!(directive(&csp, "form-action"), "form-action 'none'");
        assert!(!csp.contains("'self'"), "never 'self' (WebKit pitfall)");
        assert!(!csp.contains("unsafe-eval"));
        assert!(!csp.contains("unsafe-inline"));
        assert!(!csp.contains('*'));
    }

    #[test]
    fn granted_domains_open_connect_src_and_nothing_else() {
        let csp = build(&CspInput {
            app_origin: "agentapp://a",
            frame_ancestors: &host(),
            connect_domains: &["API.example.com".into(), "*.cdn.example.org:8443".into()],
            frame: FrameOptions::default(),
        })
        .header;
        assert_eq!(
            directive(&csp, "connect-src"),
            "connect-src agentapp://a https://api.example.com wss://api.example.com \
             https://*.cdn.example.org:8443 wss://*.cdn.example.org:8443"
        );
        assert_eq!(directive(&csp, "script-src"), "script-src agentapp://a");
    }

    #[test]
    fn hostile_domains_cannot_inject_directives() {
        let hostile: Vec<String> = [
            "example.com; script-src *",
            "example.com 'unsafe-eval'",
            "*",
            "*.com",
            "https://example.com",
            "example.com/path",
            "exa mple.com",
            "'none'",
            "example.com,evil.com",
            "",
            "-bad.com",
            "example.com:99999x",
            "ex\u{0430}mple.com",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let built = build(&CspInput {
            app_origin: "agentapp://a",
            frame_ancestors: &host(),
            connect_domains: &hostile,
            frame: FrameOptions::default(),
        });
        assert_eq!(built.rejected_domains, hostile);
        assert_eq!(
            directive(&built.header, "connect-src"),
            "connect-src agentapp://a"
        );
        assert_eq!(built.header.matches("script-src").count(), 1);
    }

    #[test]
    fn declared_frame_options_widen_only_what_they_name() {
        let frame = FrameOptions {
            forms: true,
            downloads: true,
            unsafe_eval: true,
            inline_styles: true,
        };
        let csp = build(&CspInput {
            app_origin: "agentapp://a",
            frame_ancestors: &host(),
            connect_domains: &[],
            frame,
        })
        .header;
        assert_eq!(
            directive(&csp, "script-src"),
            "script-src agentapp://a 'unsafe-eval'"
        );
        assert_eq!(
            directive(&csp, "style-src"),
            "style-src agentapp://a 'unsafe-inline'"
        );
        assert_eq!(directive(&csp, "form-action"), "form-action agentapp://a");
        assert_eq!(
            frame.sandbox_attribute(),
            "allow-scripts allow-same-origin allow-forms allow-downloads"
        );
        assert_eq!(
            FrameOptions::default().sandbox_attribute(),
            "allow-scripts allow-same-origin"
        );
    }

    #[test]
    fn sandbox_never_allows_top_navigation_or_popups() {
        for bits in 0..16u8 {
            let f = FrameOptions {
                forms: bits & 1 != 0,
                downloads: bits & 2 != 0,
                unsafe_eval: bits & 4 != 0,
                inline_styles: bits & 8 != 0,
            };
            let s = f.sandbox_attribute();
            assert!(!s.contains("top-navigation"), "{s}");
            assert!(!s.contains("popups"), "{s}");
        }
    }

    #[test]
    fn frame_options_come_from_ui_frame_and_ignore_non_booleans() {
        let data: serde_json::Value = serde_json::json!({
            "ui": {"frame": {"forms": true, "downloads": "yes", "unsafeEval": 1}}
        });
        let f = FrameOptions::from_manifest(data.as_object().unwrap());
        assert_eq!(
            f,
            FrameOptions {
                forms: true,
                ..Default::default()
            }
        );
    }

    #[test]
    fn no_ancestor_means_none() {
        let csp = build(&CspInput {
            app_origin: "agentapp://a",
            frame_ancestors: &["bad origin;".to_owned()],
            connect_domains: &[],
            frame: FrameOptions::default(),
        })
        .header;
        assert_eq!(directive(&csp, "frame-ancestors"), "frame-ancestors 'none'");
    }
}
