//! `lime.secrets` slots: the values a user binds to the `secrets[]` slots an app's manifest
//! declares (`{key, provider, required, scope}`), kept in the host's [`secrets`] store (the OS
//! keyring where a Secret Service answers, else the encrypted file).
//!
//! `host.db` records only the binding (`store::SecretBinding`): where the value is kept and the
//! opaque ref the app is given. The ref is 128 random bits, new on every bind, so it says nothing
//! about the value or the slot's name, and a rebind or unset makes the old one worthless. The
//! app never gets the value. Each bind stores the value under a fresh name
//! (`app/<app>/<slot>/<id>`) before the binding points at it, so a failure half-way leaves the
//! previous binding whole.

use crate::foundation::random::random_hex;
use serde::Serialize;
use serde_json::Value;

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::install::manifest::{Item, ItemText, Key, Manifest};
use crate::install::secrets::{self, SecretRef, SecretValue, MAX_SECRET_BYTES};
use crate::install::store::{SecretBinding, Store};

/// Longest slot key (bytes); keys are `A-Z a-z 0-9 . _ -`.
pub const MAX_SLOT_KEY: usize = 64;
/// Prefix of the refs apps are given.
pub const REF_PREFIX: &str = "secretref_";

/// A slot the active manifest declares, and whether it is bound.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlotStatus {
    pub slot: String,
    pub required: bool,
    pub provider: Option<String>,
    pub scope: Option<String>,
    pub bound: bool,
    /// `keyring` or `encrypted-file` when bound.
    pub store: Option<String>,
    pub bound_at: Option<String>,
}

/// The `secrets[]` entries of a manifest that have a key, in manifest order (first wins).
pub fn declared_slots(m: &Manifest) -> Vec<(String, &Value)> {
    let mut out: Vec<(String, &Value)> = Vec::new();
    for s in m.view().items(Key::Secrets) {
        if let Some(k) = s.key() {
            if !out.iter().any(|(o, _)| o == k) {
                out.push((k.to_owned(), s.raw()));
            }
        }
    }
    out
}

fn valid_slot_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_SLOT_KEY
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

fn unknown_slot(app: &str, slot: &str) -> HostError {
    HostError::new(
        ErrorCode::SecretSlotUnknown,
        format!("{app} declares no secret slot {slot:?} (see `apphost secrets list {app}`)"),
    )
    .with("app", app)
    .with("slot", slot)
}

/// Checks that the active version of `app` declares `slot` (and that its key can be stored);
/// returns the active version.
pub fn check_slot(store: &Store, app: &str, slot: &str) -> HostResult<String> {
    let active = store.active_app(app)?;
    let declared = declared_slots(&active.manifest)
        .iter()
        .any(|(k, _)| k == slot);
    if !declared {
        return Err(unknown_slot(app, slot));
    }
    if !valid_slot_key(slot) {
        return Err(HostError::new(
            ErrorCode::SecretInvalidName,
            format!(
                "the slot key {slot:?} cannot be bound: keys are 1-{MAX_SLOT_KEY} bytes of A-Z a-z 0-9 . _ -"
            ),
        )
        .with("slot", slot));
    }
    Ok(active.version)
}

/// Checks a value a user typed: not empty, at most 64 KiB.
pub fn check_value(value: &str) -> HostResult<()> {
    if value.is_empty() {
        return Err(HostError::new(
            ErrorCode::SecretInvalidValue,
            "the secret value is empty; nothing was stored",
        ));
    }
    if value.len() > MAX_SECRET_BYTES {
        return Err(HostError::new(
            ErrorCode::SecretInvalidValue,
            format!("a secret value may hold at most {MAX_SECRET_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Binds `value` to `slot` of `app` (the store must be opened locked): the value goes to the
/// secret store under a fresh name, then one audited `host.db` transaction points the slot at
/// it, then the previous value (if any) is deleted. Returns the new binding.
pub fn set(store: &Store, app: &str, slot: &str, value: &SecretValue) -> HostResult<SecretBinding> {
    let version = check_slot(store, app, slot)?;
    check_value(value.expose())?;
    let dir = store.data_dir().clone();
    let backend = secrets::open_default(&dir)?;
    let name = format!("app/{app}/{slot}/{}", random_hex(8)?);
    backend.set(&name, value)?;
    let binding = SecretBinding {
        slot: slot.to_owned(),
        handle: format!("{REF_PREFIX}{}", random_hex(16)?),
        stored_as: backend.reference(&name).to_string(),
        bound_at: crate::install::store::now_str(),
    };
    let previous = match store.bind_secret(app, &version, &binding) {
        Ok(p) => p,
        Err(e) => {
            // Nothing points at the new value: remove it (best effort) and report the failure.
            let _ = backend.delete(&name);
            return Err(e);
        }
    };
    if let Some(p) = previous {
        for w in crate::install::store::delete_secret_values(&dir, std::slice::from_ref(&p)) {
            tracing::warn!(
                "could not delete the previous value of {slot}: {}",
                w.message
            );
        }
    }
    Ok(binding)
}

/// Unbinds `slot` of `app`; `false` if it was not bound. The slot must be declared by the
/// active version or still be bound (a slot an update dropped).
pub fn unset(store: &Store, app: &str, slot: &str) -> HostResult<bool> {
    let active = store.active_app(app)?;
    // A slot an update stopped declaring can still be unbound (its value removed).
    let bound = store.secret_bindings(app)?.iter().any(|b| b.slot == slot);
    if !bound
        && !declared_slots(&active.manifest)
            .iter()
            .any(|(k, _)| k == slot)
    {
        return Err(unknown_slot(app, slot));
    }
    match store.unbind_secret(app, Some(&active.version), slot)? {
        Some(old) => {
            for w in crate::install::store::delete_secret_values(
                store.data_dir(),
                std::slice::from_ref(&old),
            ) {
                tracing::warn!("could not delete the value of {slot}: {}", w.message);
            }
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Every slot the active version declares, with its binding state (never a value).
pub fn list(store: &Store, app: &str) -> HostResult<Vec<SlotStatus>> {
    let active = store.active_app(app)?;
    let bindings = store.secret_bindings(app)?;
    Ok(declared_slots(&active.manifest)
        .into_iter()
        .map(|(key, decl)| {
            let b = bindings.iter().find(|b| b.slot == key);
            let decl = Item::new(decl);
            let text = |f: ItemText| decl.text(f).map(str::to_owned);
            SlotStatus {
                required: decl.required(),
                provider: text(ItemText::Provider),
                scope: text(ItemText::Scope),
                bound: b.is_some(),
                store: b.and_then(|b| b.stored_as.split(':').next().map(str::to_owned)),
                bound_at: b.map(|b| b.bound_at.clone()),
                slot: key,
            }
        })
        .collect())
}

/// Why [`get_ref`] has no ref to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefError {
    /// The active manifest declares no such slot.
    NotDeclared,
    /// Declared, but no value is bound.
    NotBound,
}

/// The opaque ref of a declared, bound slot: what `lime.secrets.getRef` answers.
pub fn get_ref(store: &Store, app: &str, slot: &str) -> HostResult<Result<String, RefError>> {
    let active = store.active_app(app)?;
    if !declared_slots(&active.manifest)
        .iter()
        .any(|(k, _)| k == slot)
    {
        return Ok(Err(RefError::NotDeclared));
    }
    Ok(store
        .secret_bindings(app)?
        .into_iter()
        .find(|b| b.slot == slot)
        .map(|b| b.handle)
        .ok_or(RefError::NotBound))
}

/// The value behind a ref an app handed back, for host code that uses it on the app's behalf
/// (never for the app itself). `None` when the ref is not a current binding of `app`.
pub fn resolve(store: &Store, app: &str, handle: &str) -> HostResult<Option<SecretValue>> {
    let Some(b) = store
        .secret_bindings(app)?
        .into_iter()
        .find(|b| b.handle == handle)
    else {
        return Ok(None);
    };
    let r = SecretRef::parse(&b.stored_as).ok_or_else(|| {
        HostError::new(
            ErrorCode::StoreCorrupt,
            format!("the binding of {app}/{} names no secret store", b.slot),
        )
    })?;
    secrets::open_backend(store.data_dir(), r.backend)?.get(&r.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_keys_are_a_small_charset() {
        assert!(valid_slot_key("api_token.v2-x"));
        for bad in ["", "a/b", "a b", "é", &"k".repeat(MAX_SLOT_KEY + 1)] {
            assert!(!valid_slot_key(bad), "{bad:?}");
        }
    }

    #[test]
    fn values_must_be_non_empty_and_bounded() {
        assert_eq!(
            check_value("").unwrap_err().code,
            ErrorCode::SecretInvalidValue
        );
        assert!(check_value(&"x".repeat(MAX_SECRET_BYTES)).is_ok());
        assert_eq!(
            check_value(&"x".repeat(MAX_SECRET_BYTES + 1))
                .unwrap_err()
                .code,
            ErrorCode::SecretInvalidValue
        );
    }
}
