//! The one install driver (`store::driver`): stage → plan → consent → commit, and a staged
//! package that removes its staging folder when it is dropped, on every refusal.

mod support;

use std::collections::BTreeSet;

use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::{InspectOptions, Inspection};
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::store::{Given, InstallMode, InstallPlan, ModeChoice, PlanOptions, Store};
use support::fixture;

fn staging_entries(dir: &DataDir) -> usize {
    std::fs::read_dir(dir.staging())
        .map(|rd| rd.count())
        .unwrap_or(0)
}

const SIDELOAD: PlanOptions = PlanOptions {
    sideload: true,
    accept_new_publisher: false,
};

fn drive(
    store: &Store,
    app: &str,
    choice: ModeChoice,
    options: PlanOptions,
    consent: &mut dyn host_core::install::store::Consent,
) -> HostResult<host_core::install::store::Installed> {
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let source = resolve(&fixture(app), &CatalogSelect::default()).unwrap();
    store.drive_install(&source, &opts, choice, options, &mut |_, _| {}, consent)
}

#[test]
fn a_dropped_staging_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path());
    let (store, _) = Store::open_locked(&dir).unwrap();
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let source = resolve(&fixture("good/hello-app"), &CatalogSelect::default()).unwrap();
    let staged = store.stage(&source, &opts, &mut |_, _| {}).unwrap();
    assert_eq!(staging_entries(&dir), 1, "staging holds the package");
    drop(staged);
    assert_eq!(staging_entries(&dir), 0, "dropping removes it");
}

#[test]
fn every_refusal_leaves_no_staging_and_nothing_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path());
    let (store, _) = Store::open_locked(&dir).unwrap();

    // Refused by the plan: an update of an app that is not installed.
    let e = drive(
        &store,
        "good/hello-app",
        ModeChoice::Fixed(InstallMode::Update),
        SIDELOAD,
        &mut Given,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::AppNotInstalled, "{e:?}");
    assert_eq!(staging_entries(&dir), 0);

    // Refused by the plan: an unsigned package without the sideload choice.
    let e = drive(
        &store,
        "good/hello-app",
        ModeChoice::ByInstalled,
        PlanOptions {
            sideload: false,
            accept_new_publisher: false,
        },
        &mut Given,
    )
    .unwrap_err();
    assert_ne!(e.code, ErrorCode::Internal, "{e:?}");
    assert_eq!(staging_entries(&dir), 0);

    // Refused by the consent.
    let mut asked = 0;
    let mut decline = |_: &Inspection, _: &InstallPlan| -> HostResult<BTreeSet<String>> {
        asked += 1;
        Err(HostError::new(ErrorCode::InstallConsentDeclined, "no"))
    };
    let e = drive(
        &store,
        "good/hello-app",
        ModeChoice::ByInstalled,
        SIDELOAD,
        &mut decline,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InstallConsentDeclined);
    assert_eq!(asked, 1, "consent is asked once, after planning");
    assert_eq!(staging_entries(&dir), 0);

    // A consent that grants less than the plan needs: the commit refuses it.
    let needs = {
        let profile = HostProfile::current();
        let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
        let source = resolve(&fixture("good/hello-app"), &CatalogSelect::default()).unwrap();
        let staged = store.stage(&source, &opts, &mut |_, _| {}).unwrap();
        let planned = store
            .plan_staged(staged, ModeChoice::ByInstalled, SIDELOAD)
            .unwrap();
        planned.plan().needs_consent().to_vec()
    };
    assert_eq!(
        staging_entries(&dir),
        0,
        "a dropped plan removes its staging"
    );
    if !needs.is_empty() {
        let mut stingy = |_: &Inspection, _: &InstallPlan| -> HostResult<BTreeSet<String>> {
            Ok(BTreeSet::new())
        };
        let e = drive(
            &store,
            "good/hello-app",
            ModeChoice::ByInstalled,
            SIDELOAD,
            &mut stingy,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::InstallConsentRequired, "{e:?}");
        assert_eq!(staging_entries(&dir), 0);
    }
    assert!(store.app_names().unwrap().is_empty());
}

#[test]
fn by_installed_installs_then_updates_and_the_plan_is_returned() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path());
    let (store, _) = Store::open_locked(&dir).unwrap();
    let first = drive(
        &store,
        "good/hello-app",
        ModeChoice::ByInstalled,
        SIDELOAD,
        &mut Given,
    )
    .unwrap();
    assert_eq!(first.plan.mode(), InstallMode::Install);
    assert_eq!(first.summary.name, "hello-app");
    assert_eq!(staging_entries(&dir), 0);

    // The same package again: ByInstalled picks update, which the plan refuses (same version).
    let e = drive(
        &store,
        "good/hello-app",
        ModeChoice::ByInstalled,
        SIDELOAD,
        &mut Given,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InstallAlreadyInstalled, "{e:?}");
    assert_eq!(staging_entries(&dir), 0);
    assert_eq!(store.app_names().unwrap(), ["hello-app"]);
}
