//! Permission checks: app permissions and entry-scoped permission requirements.

use super::{action, Ctx, Grants, Outcome};

pub(super) fn permissions(cx: &mut Ctx) {
    let v = cx.m.view();
    for p in v.permissions() {
        let key = p.label("permission").to_owned();
        let required = p.required();
        let scope = p.scope().unwrap_or("?").to_owned();
        if cx.granted(&key) {
            let how = if matches!(cx.state.grants, Grants::Preview) {
                "granted when you install"
            } else {
                "granted"
            };
            cx.push(
                "permission",
                key.clone(),
                required,
                Outcome::Pass,
                format!("{scope} permission {key} is {how}"),
            );
        } else if required {
            let c = cx.push(
                "permission",
                key.clone(),
                true,
                Outcome::NeedsSetup,
                format!("required {scope} permission {key} is not granted"),
            );
            c.setup_action = action(
                &key,
                format!("Grant {key}"),
                "grant-permission",
                Some(key.clone()),
            );
        } else {
            cx.push(
                "permission",
                key.clone(),
                false,
                Outcome::Notice,
                format!("optional {scope} permission {key} is asked for when the app needs it"),
            );
        }
    }
    // Entry-scoped permission requirements.
    for e in v.entries() {
        let ekey = e.label("entry").to_owned();
        for perm in e.permissions() {
            if !cx.granted(perm) {
                let declared_optional = cx.declared.get(perm).is_some_and(|d| d.1);
                let outcome = if declared_optional {
                    Outcome::Degraded
                } else {
                    Outcome::NeedsSetup
                };
                let c = cx.push(
                    "permission",
                    format!("{ekey}:{perm}"),
                    true,
                    outcome,
                    format!("entry {ekey} needs permission {perm}"),
                );
                c.entry = Some(ekey.clone());
                c.setup_action = action(
                    perm,
                    format!("Grant {perm}"),
                    "grant-permission",
                    Some(perm.to_owned()),
                );
            }
        }
    }
}
