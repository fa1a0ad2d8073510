//! `apphost model set|show|test`: the model the runtime talks to (host-core's
//! `model_settings`); the API key is read from an environment variable and never printed.

use clap::Subcommand;
use serde_json::json;

use super::output;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::hosting::model_settings::{self, KeyChange, KeyOutcome};
use host_core::install::secrets::SecretValue;
use host_core::install::store::Store;

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Set the OpenAI-compatible endpoint and model (the API key comes from an env variable).
    Set {
        /// The API root, e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1.
        #[arg(long, value_name = "URL")]
        base_url: String,
        /// The model name the endpoint knows.
        #[arg(long, value_name = "NAME")]
        model: String,
        /// Read the API key from this environment variable and keep it in the secret store.
        #[arg(long, value_name = "VAR", conflicts_with = "no_api_key")]
        api_key_env: Option<String>,
        /// Remove the stored API key.
        #[arg(long)]
        no_api_key: bool,
    },
    /// Show the model settings; says whether an API key is set and where, never the key.
    Show,
    /// Send one small request to the model: latency, or the provider's error.
    Test,
}

pub fn run(dir: &DataDir, cmd: ModelCommand, json: bool) -> HostResult<i32> {
    match cmd {
        ModelCommand::Set {
            base_url,
            model,
            api_key_env,
            no_api_key,
        } => set(
            dir,
            &base_url,
            &model,
            api_key_env.as_deref(),
            no_api_key,
            json,
        ),
        ModelCommand::Show => show(dir, json),
        ModelCommand::Test => test(dir, json),
    }
}

fn set(
    dir: &DataDir,
    base_url: &str,
    model: &str,
    key_env: Option<&str>,
    no_key: bool,
    json: bool,
) -> HostResult<i32> {
    // Everything is checked before the data directory is touched.
    model_settings::validate_base_url(base_url)?;
    model_settings::validate_model_name(model)?;
    let key = match key_env {
        Some(var) => match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => KeyChange::Set(SecretValue::new(v.trim().to_owned())),
            _ => {
                return Err(HostError::new(
                    ErrorCode::ModelApiKeyEnvUnset,
                    format!("the environment variable {var} is not set (or is empty)"),
                )
                .with("variable", var))
            }
        },
        None if no_key => KeyChange::Remove,
        None => KeyChange::Keep,
    };
    let (store, _) = Store::open_locked(dir)?;
    let (settings, outcome) = model_settings::set(&store, base_url, model, key)?;
    let status = model_settings::status(&store)?;
    let key_text = match outcome {
        KeyOutcome::Stored => format!(
            "stored in the {}",
            status.api_key.location.as_deref().unwrap_or("secret store")
        ),
        KeyOutcome::Kept => "kept".to_owned(),
        KeyOutcome::Removed => "removed".to_owned(),
        KeyOutcome::DroppedForNewUrl => {
            "removed (the base URL changed; set it again with --api-key-env)".to_owned()
        }
        KeyOutcome::None => "none".to_owned(),
    };
    output::done(
        json,
        &format!(
            "model set: {} at {}\nAPI key: {key_text}",
            settings.model, settings.base_url
        ),
        &json!({"ok": true, "settings": settings, "apiKey": outcome, "status": status}),
    );
    Ok(0)
}

fn show(dir: &DataDir, json: bool) -> HostResult<i32> {
    let status = if dir.db_path().exists() {
        model_settings::status(&Store::open(dir)?)?
    } else {
        // Showing must not create a data directory.
        model_settings::ModelStatus {
            status: "needs-setup",
            base_url: None,
            model: None,
            api_key: model_settings::ApiKeyStatus {
                set: false,
                store: None,
                location: None,
                present: None,
                problem: None,
            },
        }
    };
    if json {
        output::done(true, "", &serde_json::to_value(&status).unwrap_or_default());
        return Ok(0);
    }
    out_line!("status:   {}", status.status);
    match (&status.base_url, &status.model) {
        (Some(url), Some(model)) => {
            out_line!("base URL: {url}");
            out_line!("model:    {model}");
        }
        _ => out_line!("no model is configured: apphost model set --base-url URL --model NAME [--api-key-env VAR]"),
    }
    let k = &status.api_key;
    if k.set {
        out_line!(
            "API key:  set, kept in the {}{}",
            k.location.as_deref().or(k.store).unwrap_or("secret store"),
            match (k.present, &k.problem) {
                (Some(false), _) => " — but missing there; set it again".to_owned(),
                (_, Some(p)) => format!(" — cannot check: {p}"),
                _ => String::new(),
            }
        );
    } else if status.base_url.is_some() {
        out_line!("API key:  not set");
    }
    Ok(0)
}

fn test(dir: &DataDir, json: bool) -> HostResult<i32> {
    if !dir.db_path().exists() {
        return Err(HostError::new(
            ErrorCode::ModelNotConfigured,
            "no model is configured; run `apphost model set --base-url URL --model NAME`",
        ));
    }
    let report = model_settings::test(dir)?;
    output::done(
        json,
        &format!(
            "ok: {} at {} answered in {} ms (first event after {} ms)",
            report.model, report.base_url, report.latency_ms, report.first_event_ms
        ),
        &serde_json::to_value(&report).unwrap_or_default(),
    );
    Ok(0)
}
