//! Is there a newer AppHost? The signed update feed (docs/shipping.md, "Updates").
//!
//! `scripts/package.sh --release` publishes `latest.json` (Tauri's updater format: `version`,
//! `notes`, `pub_date`, `platforms.<target>.{url, signature}`, plus `downloadPage`) and
//! `latest.json.sig`, a minisign signature of the feed's exact bytes made with the release key
//! (`tauri signer sign`). This module fetches both, checks the signature with the public key
//! compiled into this build (`APPHOST_UPDATE_PUBKEY` at build time, the same base64 form as
//! Tauri's `plugins.updater.pubkey`) and only then reads the feed. There is no switch that skips
//! the check: a build without a key checks nothing and says so ([`UpdateState::Disabled`]);
//! a build with one never shows an unsigned claim. The answer is a notice (deb and rpm
//! installs do not replace themselves: the user installs the new package); nothing is
//! downloaded or run.
//!
//! Refusals, each a stable code and no notice: `update.bad_signature` (feed or signature
//! changed), `update.wrong_key` (signed by another key), `update.downgrade` (a signed but older
//! feed: a replay), `update.bad_feed` (over [`FEED_LIMIT`], not JSON, bad version, no link),
//! `update.unreachable` (network, HTTP status, timeout, a URL that is not https or loopback
//! http).

use std::time::Duration;

use minisign_verify::{PublicKey, Signature};
use serde::{Deserialize, Serialize};

use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// Largest feed (and signature) read; more is `update.bad_feed`.
pub const FEED_LIMIT: usize = 64 * 1024;
/// How long one check may take end to end (both requests).
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// The feed URL set at build time (`APPHOST_UPDATE_ENDPOINT`); `APPHOST_UPDATE_URL` at run time
/// points a check elsewhere (a mirror, a test server): the key still decides.
pub fn endpoint(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    var("APPHOST_UPDATE_URL")
        .filter(|v| !v.is_empty())
        .or_else(|| option_env!("APPHOST_UPDATE_ENDPOINT").map(str::to_owned))
        .filter(|v| !v.is_empty())
}

/// The release key compiled into this build, if any.
pub fn compiled_key() -> Option<&'static str> {
    option_env!("APPHOST_UPDATE_PUBKEY")
        .filter(|k| !k.is_empty())
        .or_else(debug_test_key)
}

/// Debug builds only: `APPHOST_DEBUG_UPDATE_PUBKEY` at run time stands in for a missing
/// compiled-in key, so the AppImage self-update test (scripts/test-packages.sh) uses a test key
/// without rebuilding the shared debug build. A release build never reads it (and `package.sh
/// --release` refuses to build without `APPHOST_UPDATE_PUBKEY`).
fn debug_test_key() -> Option<&'static str> {
    if !cfg!(debug_assertions) {
        return None;
    }
    static KEY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        std::env::var("APPHOST_DEBUG_UPDATE_PUBKEY")
            .ok()
            .filter(|k| !k.is_empty())
    })
    .as_deref()
}

/// The public key the feed must be signed with.
pub struct UpdateKey(PublicKey);

impl UpdateKey {
    /// Tauri's form (`tauri signer generate`'s `.pub` file): base64 of the minisign public key
    /// file; the bare minisign key line is accepted too.
    pub fn parse(text: &str) -> HostResult<UpdateKey> {
        let text = text.trim();
        let decoded = decode_base64_text(text);
        let key = match decoded.as_deref() {
            Some(lines) if lines.contains('\n') => PublicKey::decode(lines),
            _ => PublicKey::from_base64(text),
        };
        key.map(UpdateKey).map_err(|_| {
            HostError::new(
                ErrorCode::UpdateBadSignature,
                "the update key built into this AppHost is not a minisign public key",
            )
        })
    }
}

/// What the check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum UpdateState {
    /// This build has no update key or no feed URL: nothing is checked.
    Disabled,
    /// The signed feed names this version.
    UpToDate,
    /// The signed feed names a newer version: `notice` says which and where to get it.
    Available,
    /// The check was refused or failed: `error` has the code.
    Failed,
}

/// A newer version, from a feed whose signature verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateNotice {
    pub version: String,
    /// The release notes, at most 2,000 characters.
    pub notes: String,
    /// Where to get it: the feed's `downloadPage`, else this install kind's package URL.
    pub url: String,
}

/// The answer of `check_update`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatus {
    pub current: String,
    pub state: UpdateState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<UpdateNotice>,
    /// The refusal's code and message (`update.*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<UpdateError>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct UpdateError {
    pub code: String,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Feed {
    version: String,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    download_page: Option<String>,
    #[serde(default)]
    platforms: std::collections::BTreeMap<String, Platform>,
}

#[derive(Deserialize)]
struct Platform {
    url: String,
}

const NOTES_LIMIT: usize = 2_000;

/// Checks a fetched feed: the signature over its exact bytes with `key`, then its version
/// against `current`. `platform` picks the package link when the feed has no `downloadPage`
/// (`linux-x86_64-deb`, `linux-x86_64-rpm`, ...). `Ok(None)`: up to date.
pub fn check_feed(
    feed: &[u8],
    signature: &[u8],
    key: &UpdateKey,
    current: &semver::Version,
    platform: &str,
) -> HostResult<Option<UpdateNotice>> {
    if feed.len() > FEED_LIMIT || signature.len() > FEED_LIMIT {
        return Err(bad_feed(format!("over {FEED_LIMIT} bytes")));
    }
    verify(feed, signature, key)?;
    let feed: Feed =
        serde_json::from_slice(feed).map_err(|e| bad_feed(format!("not a feed: {e}")))?;
    let version = semver::Version::parse(feed.version.trim_start_matches('v'))
        .map_err(|e| bad_feed(format!("version {:?}: {e}", feed.version)))?;
    if version < *current {
        return Err(HostError::new(
            ErrorCode::UpdateDowngrade,
            format!("the signed update feed names {version}, older than this AppHost ({current})"),
        )
        .with("feedVersion", version.to_string()));
    }
    if version == *current {
        return Ok(None);
    }
    let url = feed
        .download_page
        .or_else(|| feed.platforms.get(platform).map(|p| p.url.clone()))
        .or_else(|| feed.platforms.values().next().map(|p| p.url.clone()))
        .filter(|u| is_web_link(u))
        .ok_or_else(|| bad_feed("no https download link".into()))?;
    let mut notes = feed.notes.unwrap_or_default();
    if let Some((cut, _)) = notes.char_indices().nth(NOTES_LIMIT) {
        notes.truncate(cut);
    }
    Ok(Some(UpdateNotice {
        version: version.to_string(),
        notes,
        url,
    }))
}

fn verify(feed: &[u8], signature: &[u8], key: &UpdateKey) -> HostResult<()> {
    let bad = |what: &str| {
        HostError::new(
            ErrorCode::UpdateBadSignature,
            format!("the update feed's signature {what}"),
        )
    };
    let text = std::str::from_utf8(signature).map_err(|_| bad("is not text"))?;
    let text = text.trim();
    // Tauri's signer writes the minisign signature file base64-encoded; plain minisign too.
    let lines = decode_base64_text(text).unwrap_or_else(|| text.to_owned());
    let signature = Signature::decode(&lines).map_err(|_| bad("is not a minisign signature"))?;
    key.0.verify(feed, &signature, false).map_err(|e| match e {
        minisign_verify::Error::UnexpectedKeyId => HostError::new(
            ErrorCode::UpdateWrongKey,
            "the update feed is signed by another key than the one built into this AppHost",
        ),
        _ => bad("does not match the feed"),
    })
}

fn decode_base64_text(text: &str) -> Option<String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    String::from_utf8(bytes).ok()
}

fn bad_feed(message: String) -> HostError {
    HostError::new(
        ErrorCode::UpdateBadFeed,
        format!("the update feed is refused: {message}"),
    )
}

/// A link a notice may show: https only.
fn is_web_link(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some())
}

/// Where the feed may come from: https, or http to a loopback address (a local mirror or test
/// server; the signature is checked the same way).
fn fetchable(url: &str) -> HostResult<url::Url> {
    let parsed = url::Url::parse(url).map_err(|e| unreachable(format!("{url}: {e}")))?;
    let loopback = matches!(parsed.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(unreachable(format!(
            "{url}: the update feed is fetched over https only"
        ))),
    }
}

fn unreachable(message: String) -> HostError {
    HostError::new(
        ErrorCode::UpdateUnreachable,
        format!("cannot fetch the update feed: {message}"),
    )
}

/// Fetches the feed at `url` and its signature at `url + ".sig"`, each at most [`FEED_LIMIT`]
/// bytes, both within `timeout`, and checks them ([`check_feed`]).
pub fn check(
    url: &str,
    key: &UpdateKey,
    current: &semver::Version,
    platform: &str,
    timeout: Duration,
) -> HostResult<Option<UpdateNotice>> {
    let feed_url = fetchable(url)?;
    let sig_url = fetchable(&format!("{url}.sig"))?;
    // On a thread of its own: the caller may be inside another runtime (a host command runs on
    // a blocking worker of the window's or the server's tokio runtime).
    let (feed, signature) = std::thread::spawn(move || fetch_both(feed_url, sig_url, timeout))
        .join()
        .map_err(|_| unreachable("the fetch thread crashed".into()))??;
    check_feed(&feed, &signature, key, current, platform)
}

fn fetch_both(
    feed_url: url::Url,
    sig_url: url::Url,
    timeout: Duration,
) -> HostResult<(Vec<u8>, Vec<u8>)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| unreachable(format!("no runtime: {e}")))?;
    runtime.block_on(async {
        tokio::time::timeout(timeout, async {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let client = reqwest::Client::builder()
                .connect_timeout(timeout)
                .redirect(reqwest::redirect::Policy::limited(3))
                .build()
                .map_err(|e| unreachable(e.to_string()))?;
            let feed = fetch(&client, feed_url).await?;
            let signature = fetch(&client, sig_url).await?;
            Ok::<_, HostError>((feed, signature))
        })
        .await
        .map_err(|_| unreachable(format!("no answer within {} s", timeout.as_secs_f32())))?
    })
}

async fn fetch(client: &reqwest::Client, url: url::Url) -> HostResult<Vec<u8>> {
    let shown = url.to_string();
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| unreachable(format!("{shown}: {e}")))?;
    if !response.status().is_success() {
        return Err(unreachable(format!("{shown}: HTTP {}", response.status())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| unreachable(format!("{shown}: {e}")))?
    {
        if body.len() + chunk.len() > FEED_LIMIT {
            return Err(bad_feed(format!("{shown} is over {FEED_LIMIT} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The whole check as the host UI asks for it: disabled without a key or URL, else the
/// outcome with any refusal folded into [`UpdateStatus::error`].
pub fn status(
    key: Option<&str>,
    url: Option<String>,
    current: &str,
    platform: &str,
    timeout: Duration,
) -> UpdateStatus {
    let mut status = UpdateStatus {
        current: current.to_owned(),
        state: UpdateState::Disabled,
        notice: None,
        error: None,
    };
    let (Some(key), Some(url)) = (key, url) else {
        return status;
    };
    let outcome = UpdateKey::parse(key).and_then(|key| {
        let current = semver::Version::parse(current)
            .map_err(|e| bad_feed(format!("this build's version {current:?}: {e}")))?;
        check(&url, &key, &current, platform, timeout)
    });
    match outcome {
        Ok(Some(notice)) => {
            status.state = UpdateState::Available;
            status.notice = Some(notice);
        }
        Ok(None) => status.state = UpdateState::UpToDate,
        Err(e) => {
            status.state = UpdateState::Failed;
            status.error = Some(UpdateError {
                code: e.code.as_str().to_owned(),
                message: e.message,
            });
        }
    }
    status
}
