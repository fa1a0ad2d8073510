//! `lime.secrets`: opaque refs to the values the user bound to the slots the manifest declares
//! (`app_secrets`). The app never gets a value, a store name or a path.

use serde_json::{json, Value};

use super::err;
use crate::hosting::app_secrets::{self, RefError};
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::SecretsMethod;
use crate::install::store::Store;

pub(super) fn call(
    store: &Store,
    a: &Allowed,
    method: SecretsMethod,
    args: &Value,
) -> Result<Value, CallError> {
    match method {
        SecretsMethod::GetRef => {
            let key = args
                .get("key")
                .and_then(Value::as_str)
                .filter(|k| !k.is_empty() && k.len() <= 256)
                .ok_or_else(|| {
                    err(
                        a,
                        ErrorCode::InvalidArgument,
                        "args.key must be a slot key (a non-empty string)",
                        Some("secrets.invalid_argument"),
                    )
                })?;
            match app_secrets::get_ref(store, a.app(), key) {
                Ok(Ok(r)) => Ok(json!({ "ref": r, "key": key })),
                Ok(Err(RefError::NotDeclared)) => Err(err(
                    a,
                    ErrorCode::PermissionDenied,
                    "the app's manifest declares no secret slot with this key",
                    Some("secrets.not_declared"),
                )),
                Ok(Err(RefError::NotBound)) => Err(err(
                    a,
                    ErrorCode::SecretNotBound,
                    "no value is bound to this secret slot yet; the user binds one in the host",
                    Some("secrets.not_bound"),
                )),
                Err(e) => {
                    tracing::warn!(error = %e.message, "lime.secrets.getRef failed");
                    let mut out = err(
                        a,
                        ErrorCode::UnknownError,
                        "the host's secret store failed",
                        None,
                    );
                    out.retryable = true;
                    Err(out)
                }
            }
        }
    }
}
