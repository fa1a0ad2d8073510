//! Model settings: the OpenAI-compatible endpoint and model the runtime talks to, and a ref to
//! its API key. The URL and model name live in `host.db` (`settings`: `model.baseUrl`,
//! `model.name`, `model.apiKeyRef`); the key itself only in the [secret store](crate::install::secrets).
//!
//! A key is bound to the endpoint it was set for: changing the base URL without giving a key
//! drops the old one, so a key is never sent to a server it was not meant for.

use serde::Serialize;
use serde_json::json;

use runtime_core::backend::ExecutionBackend;
use runtime_core::provider::{
    normalize_base_url, ErrorKind, OpenAiBackend, OpenAiClient, ProviderConfig, ProviderError,
};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::install::secrets::{self, SecretRef, SecretValue};
use crate::install::store::Store;

use crate::foundation::setting_keys::{
    MODEL_API_KEY_REF as KEY_API_KEY_REF, MODEL_BASE_URL as KEY_BASE_URL, MODEL_NAME as KEY_MODEL,
};

/// The secret's name in the secret store.
pub const API_KEY_SECRET: &str = "model.apiKey";

/// What `host.db` holds about the model. No secret in here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettings {
    pub base_url: String,
    pub model: String,
    /// `<backend>:<name>` of the API key, when one is set.
    pub api_key_ref: Option<String>,
}

/// What `model set` does with the API key.
#[derive(Debug)]
pub enum KeyChange {
    /// Keep the current key if the base URL is unchanged; drop it otherwise.
    Keep,
    Set(SecretValue),
    Remove,
}

/// What happened to the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum KeyOutcome {
    Stored,
    Kept,
    /// Removed on request.
    Removed,
    /// Dropped because the base URL changed.
    DroppedForNewUrl,
    None,
}

/// The base URL, checked and normalized (no trailing slash).
pub fn validate_base_url(url: &str) -> HostResult<String> {
    normalize_base_url(url)
        .map_err(|e| HostError::new(ErrorCode::ModelInvalidBaseUrl, e.message).with("baseUrl", url))
}

pub fn validate_model_name(name: &str) -> HostResult<String> {
    let n = name.trim();
    if n.is_empty() || n.len() > 200 || n.chars().any(char::is_control) {
        return Err(HostError::new(
            ErrorCode::ModelInvalidName,
            format!("{name:?} is not a model name (1-200 bytes, no control characters)"),
        ));
    }
    Ok(n.to_owned())
}

/// The stored settings; `None` when no model is configured.
pub fn load(store: &Store) -> HostResult<Option<ModelSettings>> {
    let mut s = store.settings()?;
    match (s.remove(KEY_BASE_URL), s.remove(KEY_MODEL)) {
        (Some(base_url), Some(model)) => Ok(Some(ModelSettings {
            base_url,
            model,
            api_key_ref: s.remove(KEY_API_KEY_REF),
        })),
        _ => Ok(None),
    }
}

/// Checks and stores new settings (the store must be opened locked). Everything is checked
/// before anything is written; the key goes to the secret store first, then one `host.db`
/// transaction records the settings and the key's ref.
pub fn set(
    store: &Store,
    base_url: &str,
    model: &str,
    key: KeyChange,
) -> HostResult<(ModelSettings, KeyOutcome)> {
    let base_url = validate_base_url(base_url)?;
    let model = validate_model_name(model)?;
    let dir = store.data_dir().clone();
    let previous = load(store)?;
    let old_ref = previous
        .as_ref()
        .and_then(|p| p.api_key_ref.as_deref())
        .and_then(SecretRef::parse);
    let same_url = previous.as_ref().is_some_and(|p| p.base_url == base_url);
    let (new_ref, outcome, drop_old) = match key {
        KeyChange::Set(value) => {
            let store = secrets::open_default(&dir)?;
            store.set(API_KEY_SECRET, &value)?;
            let r = store.reference(API_KEY_SECRET);
            let moved = old_ref.as_ref().is_some_and(|o| o.backend != r.backend);
            (Some(r.to_string()), KeyOutcome::Stored, moved)
        }
        KeyChange::Keep if same_url && old_ref.is_some() => (
            old_ref.as_ref().map(ToString::to_string),
            KeyOutcome::Kept,
            false,
        ),
        KeyChange::Keep if old_ref.is_some() => (None, KeyOutcome::DroppedForNewUrl, true),
        KeyChange::Remove if old_ref.is_some() => (None, KeyOutcome::Removed, true),
        KeyChange::Keep | KeyChange::Remove => (None, KeyOutcome::None, false),
    };
    store.write_settings(
        &[
            (KEY_BASE_URL, Some(&base_url)),
            (KEY_MODEL, Some(&model)),
            (KEY_API_KEY_REF, new_ref.as_deref()),
        ],
        "model.set",
        &json!({"baseUrl": base_url, "model": model, "apiKey": outcome}),
    )?;
    if drop_old {
        if let Some(old) = &old_ref {
            // Best effort: the ref is gone already, so a leftover is unreachable, not used.
            if let Err(e) =
                secrets::open_backend(&dir, old.backend).and_then(|s| s.delete(&old.name))
            {
                tracing::warn!(
                    "could not delete the previous API key ({old}): {}",
                    e.message
                );
            }
        }
    }
    Ok((
        ModelSettings {
            base_url,
            model,
            api_key_ref: new_ref,
        },
        outcome,
    ))
}

/// What `model show` prints: never the key.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelStatus {
    /// `ready` or `needs-setup`.
    pub status: &'static str,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key: ApiKeyStatus,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyStatus {
    pub set: bool,
    /// `keyring` or `encrypted-file`.
    pub store: Option<&'static str>,
    /// Where it is kept, for people.
    pub location: Option<String>,
    /// `false` when the ref is recorded but the store does not have the key (or cannot be
    /// asked: then `problem` says why).
    pub present: Option<bool>,
    pub problem: Option<String>,
}

impl ModelStatus {
    /// No model configured.
    pub fn needs_setup() -> ModelStatus {
        ModelStatus {
            status: "needs-setup",
            base_url: None,
            model: None,
            api_key: ApiKeyStatus {
                set: false,
                store: None,
                location: None,
                present: None,
                problem: None,
            },
        }
    }
}

pub fn status(store: &Store) -> HostResult<ModelStatus> {
    let Some(settings) = load(store)? else {
        return Ok(ModelStatus::needs_setup());
    };
    let mut key = ApiKeyStatus {
        set: false,
        store: None,
        location: None,
        present: None,
        problem: None,
    };
    if let Some(r) = settings.api_key_ref.as_deref() {
        key.set = true;
        match SecretRef::parse(r) {
            None => key.problem = Some(format!("unreadable key ref {r:?}")),
            Some(r) => {
                key.store = Some(r.backend.as_str());
                match secrets::open_backend(store.data_dir(), r.backend) {
                    Ok(s) => {
                        key.location = Some(s.location());
                        match s.get(&r.name) {
                            Ok(v) => key.present = Some(v.is_some()),
                            Err(e) => key.problem = Some(format!("{}: {}", e.code, e.message)),
                        }
                    }
                    Err(e) => key.problem = Some(format!("{}: {}", e.code, e.message)),
                }
            }
        }
    }
    let ready = !key.set || key.present == Some(true);
    Ok(ModelStatus {
        status: if ready { "ready" } else { "needs-setup" },
        base_url: Some(settings.base_url),
        model: Some(settings.model),
        api_key: key,
    })
}

/// The provider configuration the runtime uses: settings plus the key from the secret store.
pub fn provider_config(store: &Store) -> HostResult<ProviderConfig> {
    let settings = load(store)?.ok_or_else(|| {
        HostError::new(
            ErrorCode::ModelNotConfigured,
            "no model is configured; run `apphost model set --base-url URL --model NAME`",
        )
    })?;
    let mut config = ProviderConfig::new(settings.base_url, settings.model);
    if let Some(r) = settings.api_key_ref.as_deref() {
        let r = SecretRef::parse(r).ok_or_else(|| {
            HostError::new(
                ErrorCode::StoreCorrupt,
                format!("unreadable API key ref {r:?}"),
            )
        })?;
        let value = secrets::open_backend(store.data_dir(), r.backend)?
            .get(&r.name)?
            .ok_or_else(|| {
                HostError::new(
                    ErrorCode::ModelApiKeyMissing,
                    format!("the API key ({r}) is no longer in the secret store; set it again with `apphost model set --api-key-env VAR`"),
                )
            })?;
        config.api_key = Some(value.expose().to_owned());
    }
    Ok(config)
}

/// The configured model as the runtime's backend: `Ok(None)` when no model is configured, or
/// when the settings cannot be used (a missing key, an unreadable ref: logged; the runtime then
/// reports `needs-setup`); `Err` only when the backend itself cannot start. The one place the
/// desktop's `lime.agent` and `apphost app-server` turn settings into a backend.
pub fn backend(store: &Store) -> HostResult<Option<std::sync::Arc<dyn ExecutionBackend>>> {
    if load(store)?.is_none() {
        return Ok(None);
    }
    let config = match provider_config(store) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(
                code = e.code.as_str(),
                "the model is not usable: {}",
                e.message
            );
            return Ok(None);
        }
    };
    let backend = OpenAiBackend::new(config).map_err(provider_error)?;
    Ok(Some(std::sync::Arc::new(backend)))
}

/// What `model test` reports.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestReport {
    pub ok: bool,
    pub base_url: String,
    pub model: String,
    pub latency_ms: u64,
    pub first_event_ms: u64,
    pub finish_reason: String,
}

/// One tiny request to the configured model. Blocking; not for use inside a tokio runtime.
pub fn test(dir: &DataDir) -> HostResult<TestReport> {
    let config = provider_config(&Store::open(dir)?)?;
    let (base_url, model) = (config.base_url.clone(), config.model.clone());
    let client = OpenAiClient::new(config).map_err(provider_error)?;
    let t = client.test_connection_blocking().map_err(provider_error)?;
    Ok(TestReport {
        ok: true,
        base_url,
        model,
        latency_ms: t.total.as_millis() as u64,
        first_event_ms: t.first_event.as_millis() as u64,
        finish_reason: t.finish_reason,
    })
}

/// A provider error as a host error with the same code string.
pub fn provider_error(e: ProviderError) -> HostError {
    let code = match e.code {
        ErrorKind::InvalidConfig => ErrorCode::ProviderInvalidConfig,
        ErrorKind::Unreachable => ErrorCode::ProviderUnreachable,
        ErrorKind::Timeout => ErrorCode::ProviderTimeout,
        ErrorKind::Auth => ErrorCode::ProviderAuth,
        ErrorKind::RateLimited => ErrorCode::ProviderRateLimited,
        ErrorKind::ServerError => ErrorCode::ProviderServerError,
        ErrorKind::HttpStatus => ErrorCode::ProviderHttpStatus,
        ErrorKind::StreamError => ErrorCode::ProviderStreamError,
        ErrorKind::StreamDropped => ErrorCode::ProviderStreamDropped,
        ErrorKind::MalformedStream => ErrorCode::ProviderMalformedStream,
        ErrorKind::ResponseTooLarge => ErrorCode::ProviderResponseTooLarge,
        ErrorKind::Cancelled => ErrorCode::ProviderCancelled,
    };
    let mut h = HostError::new(code, e.message).with("retryable", e.retryable);
    if let Some(s) = e.status {
        h = h.with("status", s);
    }
    if let Some(d) = e.retry_after {
        h = h.with("retryAfterSeconds", d.as_secs());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_error_kind_has_the_same_host_code() {
        for kind in ErrorKind::ALL {
            let h = provider_error(ProviderError::new(*kind, "m"));
            assert_eq!(h.code.as_str(), kind.as_str());
        }
    }

    #[test]
    fn base_urls_and_names_are_checked() {
        assert_eq!(
            validate_base_url("http://127.0.0.1:8080/v1/").unwrap(),
            "http://127.0.0.1:8080/v1"
        );
        for bad in [
            "",
            "localhost:8080",
            "ftp://x/v1",
            "http://u:p@x/v1",
            "http://",
        ] {
            assert_eq!(
                validate_base_url(bad).unwrap_err().code,
                ErrorCode::ModelInvalidBaseUrl,
                "{bad}"
            );
        }
        assert_eq!(validate_model_name(" llama3 ").unwrap(), "llama3");
        for bad in ["", "  ", "a\nb", &"x".repeat(201)] {
            assert_eq!(
                validate_model_name(bad).unwrap_err().code,
                ErrorCode::ModelInvalidName
            );
        }
    }
}
