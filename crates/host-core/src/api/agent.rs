//! The agent area of the host UI (`docs/host-api.md`, "Model"): the model the runtime talks to,
//! set from the host UI exactly as `apphost model set|show|test` does (`crate::hosting::model_settings`
//! does the work). The API key is write-only: answers say whether one is set, never the key.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{answer, args, Command, NoArgs, Session};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::hosting::model_settings::{self, KeyChange};
use crate::install::secrets::SecretValue;
use crate::install::store::Store;

/// Longest API key accepted from the host UI (bounded memory; real keys are ~200 bytes).
pub const MAX_API_KEY_BYTES: usize = 4096;

macro_rules! commands {
    ($($name:literal => $f:ident,)*) => {
        pub const COMMANDS: &[Command] = &[$(Command { name: $name, run: $f },)*];
    };
}

commands! {
    "model_settings" => model_settings,
    "set_model" => set_model,
    "test_model" => test_model,
}

fn model_settings(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("model_settings", raw)?;
    if !session.data.db_path().exists() {
        return answer(model_settings::ModelStatus::needs_setup());
    }
    answer(model_settings::status(&Store::open(&session.data)?)?)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "SetModelArgs")]
pub(crate) struct SetModel {
    base_url: String,
    model: String,
    /// A new key; absent or blank keeps the stored one (dropped if the base URL changes).
    api_key: Option<String>,
    /// Removes the stored key.
    #[serde(default)]
    remove_api_key: bool,
}

fn set_model(session: &Session, raw: Value) -> HostResult<Value> {
    let a: SetModel = args("set_model", raw)?;
    // Everything is checked before the data directory is touched.
    model_settings::validate_base_url(&a.base_url)?;
    model_settings::validate_model_name(&a.model)?;
    let new_key = a
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty());
    let key = match (new_key, a.remove_api_key) {
        (Some(_), true) => {
            return Err(HostError::new(
                ErrorCode::ApiBadArguments,
                "set_model takes apiKey or removeApiKey, not both",
            )
            .with("command", "set_model"))
        }
        (Some(k), false) if k.len() > MAX_API_KEY_BYTES || k.chars().any(char::is_control) => {
            return Err(HostError::new(
                ErrorCode::ApiBadArguments,
                format!("the API key must be at most {MAX_API_KEY_BYTES} bytes without control characters"),
            )
            .with("command", "set_model"))
        }
        (Some(k), false) => KeyChange::Set(SecretValue::new(k.to_owned())),
        (None, true) => KeyChange::Remove,
        (None, false) => KeyChange::Keep,
    };
    let (store, _) = Store::open_locked(&session.data)?;
    let (settings, outcome) = model_settings::set(&store, &a.base_url, &a.model, key)?;
    let status = model_settings::status(&store)?;
    answer(ModelSet {
        base_url: settings.base_url,
        model: settings.model,
        api_key_change: outcome,
        status,
    })
}

/// What `set_model` answers: the settings as stored, what happened to the key, and the status.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelSet {
    pub base_url: String,
    pub model: String,
    pub api_key_change: model_settings::KeyOutcome,
    pub status: model_settings::ModelStatus,
}

fn test_model(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("test_model", raw)?;
    if !session.data.db_path().exists() {
        return Err(HostError::new(
            ErrorCode::ModelNotConfigured,
            "no model is configured; set one on the Model page",
        ));
    }
    answer(model_settings::test(&session.data)?)
}
