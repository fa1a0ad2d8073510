//! `commit` does not trust the plan or the inspection it is handed: trust, sideload state and
//! install blockers are derived again from the staged package and the store's own trusted
//! keys, and a plan is bound to the staged package it was made for.

mod support;

use std::collections::BTreeSet;
use std::path::Path;

use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::InspectOptions;
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::signature::{self, TrustedKey};
use host_core::install::store::{InstallMode, Staged, Store};
use host_core::ErrorCode;
use support::{copy_dir, fixture, inspect_path};

/// A copy of a fixture signed with `key` (the signature file is outside what it signs).
fn signed_copy(fx: &str, dest: &Path, key: &ed25519_dalek::SigningKey) {
    copy_dir(&fixture(fx), dest);
    let insp = inspect_path(dest);
    let block = signature::sign_block(key, &insp.manifest_hash, &insp.files_digest);
    std::fs::write(
        dest.join("app.signature.yaml"),
        signature::render_signature_file(&block),
    )
    .unwrap();
}

fn trusted(key: &ed25519_dalek::SigningKey, name: &str) -> TrustedKey {
    let doc = signature::public_key_json(&key.verifying_key(), name);
    TrustedKey {
        key_id: doc["keyId"].as_str().unwrap().to_owned(),
        public_key: doc["publicKey"].as_str().unwrap().to_owned(),
        name: name.to_owned(),
    }
}

fn stage(store: &Store, pkg: &Path, keys: &[TrustedKey]) -> Staged {
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, keys);
    let source = resolve(pkg, &CatalogSelect::default()).unwrap();
    store.stage(&source, &opts, &mut |_, _| {}).unwrap()
}

fn all(plan: &host_core::install::store::InstallPlan) -> BTreeSet<String> {
    plan.needs_consent().iter().cloned().collect()
}

fn staging_is_empty(dir: &DataDir) -> bool {
    std::fs::read_dir(dir.staging())
        .map(|mut rd| rd.next().is_none())
        .unwrap_or(true)
}

#[test]
fn a_plan_for_one_package_cannot_commit_another() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path());
    let (store, _) = Store::open_locked(&dir).unwrap();
    let a = stage(&store, &fixture("good/hello-app"), &[]);
    let b = stage(&store, &fixture("good/notes-viewer"), &[]);
    let plan_a = store.plan(&a, InstallMode::Install, true).unwrap();
    let plan_b = store.plan(&b, InstallMode::Install, true).unwrap();
    assert_ne!(plan_a.package_hash(), plan_b.package_hash());

    let err = store.commit(b, &plan_a, &all(&plan_a)).unwrap_err();
    assert_eq!(err.code, ErrorCode::InstallPlanMismatch, "{err:?}");
    assert_eq!(err.details["plannedPackageHash"], plan_a.package_hash());
    assert_eq!(err.details["stagedPackageHash"], plan_b.package_hash());
    assert!(store.app_names().unwrap().is_empty());

    // The right pair still installs.
    let s = store.commit(a, &plan_a, &all(&plan_a)).unwrap();
    assert_eq!(s.name, "hello-app");
    assert_eq!(store.app_names().unwrap(), ["hello-app"]);
    assert!(staging_is_empty(&dir));
}

#[test]
fn the_callers_trusted_keys_do_not_make_a_package_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let key = signature::generate_key().unwrap();
    let pkg = tmp.path().join("signed");
    signed_copy("good/hello-app", &pkg, &key);
    let (store, _) = Store::open_locked(&dir).unwrap();
    // Inspected with the key as "trusted", but the store does not trust it.
    let staged = stage(&store, &pkg, &[trusted(&key, "Acme")]);
    assert_eq!(staged.inspection().signature.trust.as_str(), "trusted");
    let err = store
        .plan(&staged, InstallMode::Install, false)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::VerifyUntrustedKey);
    staged.abort().unwrap();
    assert!(store.app_names().unwrap().is_empty());
}

#[test]
fn commit_rechecks_trust_and_consent_against_the_store_as_it_is_now() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let key = signature::generate_key().unwrap();
    let pkg = tmp.path().join("signed");
    signed_copy("good/hello-app", &pkg, &key);
    let (store, _) = Store::open_locked(&dir).unwrap();
    let k = store.add_trusted_key(&trusted(&key, "Acme")).unwrap();

    let staged = stage(&store, &pkg, &store.trusted_keys().unwrap());
    let plan = store.plan(&staged, InstallMode::Install, false).unwrap();
    assert_eq!(plan.trust(), "trusted");
    assert!(!plan.sideload());
    assert_eq!(
        plan.publisher().new.public_key.as_deref(),
        Some(&*k.public_key)
    );
    // The key stops being trusted between plan and commit: the commit is refused.
    store.remove_trusted_key(&k.key_id).unwrap();
    let err = store.commit(staged, &plan, &all(&plan)).unwrap_err();
    assert_eq!(err.code, ErrorCode::VerifyUntrustedKey, "{err:?}");
    assert!(store.app_names().unwrap().is_empty());
    assert!(staging_is_empty(&dir));

    // Consent is checked against the re-derived plan.
    store.add_trusted_key(&trusted(&key, "Acme")).unwrap();
    let staged = stage(&store, &pkg, &[]);
    let plan = store.plan(&staged, InstallMode::Install, false).unwrap();
    assert_eq!(plan.needs_consent(), ["notes_storage"]);
    let err = store.commit(staged, &plan, &BTreeSet::new()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InstallConsentRequired);
    assert!(store.app_names().unwrap().is_empty());

    // A plan made while the key was untrusted (sideloaded) no longer matches once the key is
    // trusted: the store changed, plan again.
    store.remove_trusted_key(&k.key_id).unwrap();
    let staged = stage(&store, &pkg, &[]);
    let plan = store.plan(&staged, InstallMode::Install, true).unwrap();
    assert!(plan.sideload());
    store.add_trusted_key(&trusted(&key, "Acme")).unwrap();
    let err = store.commit(staged, &plan, &all(&plan)).unwrap_err();
    assert_eq!(err.code, ErrorCode::InstallPlanMismatch, "{err:?}");
    assert!(store.app_names().unwrap().is_empty());
}

#[test]
fn trusted_keys_are_stored_by_full_key_and_ids_are_recomputed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path());
    let (store, _) = Store::open_locked(&dir).unwrap();
    let acme = signature::generate_key().unwrap();
    let mallory = signature::generate_key().unwrap();
    let a = store.add_trusted_key(&trusted(&acme, "Acme")).unwrap();
    // A caller claiming Acme's id for Mallory's key: the id is recomputed, Acme's row is
    // neither renamed nor replaced.
    let mut forged = trusted(&mallory, "Mallory");
    forged.key_id = a.key_id.clone();
    let m = store.add_trusted_key(&forged).unwrap();
    assert_ne!(m.key_id, a.key_id);
    let keys = store.trusted_keys().unwrap();
    assert_eq!(keys.len(), 2);
    assert!(keys.contains(&a), "{keys:?}");
    assert!(keys.contains(&m), "{keys:?}");
    // Removing by full public key.
    store.remove_trusted_key(&m.public_key).unwrap();
    assert_eq!(store.trusted_keys().unwrap(), [a]);
}

/// Two trusted keys whose short ids collide (a row with a forged id, written straight into
/// host.db): each package is matched to the key that really signed it.
#[test]
fn colliding_key_ids_are_not_confused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    let acme = signature::generate_key().unwrap();
    let mallory = signature::generate_key().unwrap();
    let (store, _) = Store::open_locked(&dir).unwrap();
    let a = store.add_trusted_key(&trusted(&acme, "Acme")).unwrap();
    let m = trusted(&mallory, "Mallory");
    let db = rusqlite::Connection::open(dir.db_path()).unwrap();
    db.execute(
        "INSERT INTO trusted_keys (public_key, key_id, name, added_at) VALUES (?1, ?2, 'Mallory', 'now')",
        [&m.public_key, &a.key_id],
    )
    .unwrap();
    drop(db);
    assert_eq!(store.trusted_keys().unwrap().len(), 2);

    for (key, who) in [(&acme, "Acme"), (&mallory, "Mallory")] {
        let pkg = tmp.path().join(who);
        signed_copy("good/hello-app", &pkg, key);
        let staged = stage(&store, &pkg, &[]);
        let plan = store.plan(&staged, InstallMode::Install, false).unwrap();
        let signer = &plan.publisher().new;
        assert_eq!(signer.name.as_deref(), Some(who), "{signer:?}");
        let expected = signature::public_key_json(&key.verifying_key(), "");
        assert_eq!(signer.public_key.as_deref(), expected["publicKey"].as_str());
        assert_eq!(signer.key_id.as_deref(), expected["keyId"].as_str());
        staged.abort().unwrap();
    }
    // Removing by the shared id is ambiguous; by full key it is not.
    let err = store.remove_trusted_key(&a.key_id).unwrap_err();
    assert_eq!(err.code, ErrorCode::KeyAmbiguous);
    assert_eq!(store.trusted_keys().unwrap().len(), 2);
    store.remove_trusted_key(&m.public_key).unwrap();
    assert_eq!(store.trusted_keys().unwrap(), [a]);
}
