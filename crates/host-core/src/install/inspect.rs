//! The install-without-executing pipeline up to the point of consent:
//! read (hash, optionally stage) → verify → load manifest → project → readiness.
//!
//! Verification follows the standard's order: package and manifest hashes (against the catalog
//! release and `runtimePackage.hash` when given, and `app.lock.json` when shipped), then the
//! signature, then publisher trust. Any verification failure is an error; nothing about the
//! package is trusted before it passes. Manifest field problems are collected as findings so
//! `validate` can show them all.

use serde_json::{json, Value};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::hashing::{files_digest, manifest_hash, same_hash};
use crate::foundation::limits::Limits;
use crate::foundation::profile::HostProfile;
use crate::install::lockfile;
use crate::install::manifest::{self, authoring, Finding, Manifest, Severity};
use crate::install::package::pipeline::{read_package, BlobSink, ReadPackage};
use crate::install::package::{PackageReader, ResolvedSource};
use crate::install::projection::{self, ProjectionInput};
use crate::install::readiness::{self, HostState, Outcome, Report};
use crate::install::signature::{self, SignatureCheck, Trust, TrustedKey};

pub struct InspectOptions<'a> {
    pub limits: Limits,
    pub profile: &'a HostProfile,
    pub trusted_keys: &'a [TrustedKey],
    pub state: HostState,
}

impl<'a> InspectOptions<'a> {
    /// Options for previewing a package now (as if freshly installed with consent).
    pub fn preview(
        limits: Limits,
        profile: &'a HostProfile,
        trusted_keys: &'a [TrustedKey],
    ) -> Self {
        InspectOptions {
            limits,
            profile,
            trusted_keys,
            state: HostState {
                services: crate::install::service_launch::probe_host(),
                ..HostState::preview(jiff::Timestamp::now())
            },
        }
    }
}

impl InspectOptions<'_> {
    /// Readiness also applies the admin's services policy of `dir`
    /// (`install/services_policy.rs`), as for an installed app.
    pub fn with_services_policy(mut self, dir: &crate::foundation::paths::DataDir) -> Self {
        self.state.services.policy = Some(crate::install::services_policy::load(dir));
        self
    }
}

pub struct Inspection {
    pub source: ResolvedSource,
    pub read: ReadPackage,
    pub manifest: Manifest,
    pub manifest_hash: String,
    pub files_digest: String,
    pub signature: SignatureCheck,
    pub has_lock: bool,
    pub projection: Value,
    pub readiness: Report,
    /// [`inspect_dev`] only: the lock and signature checks that were not applied, as the
    /// errors they would have been (empty otherwise).
    pub ignored: Vec<HostError>,
}

pub fn inspect(
    source: &ResolvedSource,
    opts: &InspectOptions,
    sink: Option<&mut dyn BlobSink>,
    progress: &mut dyn FnMut(u64, u64),
) -> HostResult<Inspection> {
    inspect_as(source, opts, sink, progress, false)
}

/// [`inspect`] for `apphost dev`: a dev install is never trusted (always sideloaded, never
/// signed), so a stale `app.lock.json` or `app.signature.yaml` left by an earlier `apphost
/// sign` is not an error. Neither is verified; what they would have refused is kept in
/// [`Inspection::ignored`], and the signature is dropped, so the package reads as unsigned
/// wherever trust is derived again (the store's plan). Dropping a signature can only lower
/// trust.
pub fn inspect_dev(
    source: &ResolvedSource,
    opts: &InspectOptions,
    sink: Option<&mut dyn BlobSink>,
    progress: &mut dyn FnMut(u64, u64),
) -> HostResult<Inspection> {
    inspect_as(source, opts, sink, progress, true)
}

/// The app's name from the captured manifest, to name it in an error raised before the
/// manifest is otherwise read (e.g. a lock mismatch), when it can be read at all.
fn with_app_name(e: HostError, read: &ReadPackage, limits: &Limits) -> HostError {
    match manifest::load(&read.captured, limits) {
        Ok(m) if !m.name().is_empty() => e.with("app", m.name()),
        _ => e,
    }
}

fn inspect_as(
    source: &ResolvedSource,
    opts: &InspectOptions,
    sink: Option<&mut dyn BlobSink>,
    progress: &mut dyn FnMut(u64, u64),
    dev: bool,
) -> HostResult<Inspection> {
    let mut ignored = Vec::new();
    let mut reader = PackageReader::open(source, &opts.limits)?;
    let total = reader.listing().total_bytes;
    let read = read_package(&mut reader, sink, &opts.limits, &mut |done| {
        progress(done, total)
    })?;
    let app_md = read
        .captured
        .get("APP.md")
        .ok_or_else(|| HostError::new(ErrorCode::ManifestMissing, "the package has no APP.md"))?;
    let mhash = manifest_hash(app_md);
    let fdigest = files_digest(&read.files);

    // 1. Hashes: the catalog pins both; runtimePackage.hash, when declared, is checked rather
    //    than trusted (the reference CLI trusts it verbatim).
    if let Some(release) = &source.release {
        if !same_hash(&release.package_hash, &read.package_hash) {
            return Err(HostError::new(
                ErrorCode::VerifyPackageHashMismatch,
                format!(
                    "the package for {}@{} does not match the catalog's packageHash",
                    release.app_id, release.version
                ),
            )
            .with("expected", &release.package_hash)
            .with("computed", &read.package_hash));
        }
        if let Some(expected) = &release.manifest_hash {
            if !same_hash(expected, &mhash) {
                return Err(HostError::new(
                    ErrorCode::VerifyManifestHashMismatch,
                    "APP.md does not match the catalog's manifestHash",
                )
                .with("expected", expected)
                .with("computed", &mhash));
            }
        }
    }
    let has_lock = match read.captured.get(crate::foundation::hashing::LOCK_FILE) {
        Some(lock) => match lockfile::verify(lock, &read.files) {
            Ok(()) => true,
            Err(e) if dev => {
                ignored.push(e);
                false
            }
            Err(e) => return Err(with_app_name(e, &read, &opts.limits)),
        },
        None => false,
    };

    let mut manifest = manifest::load_with_files(
        &read.captured,
        read.files.iter().map(|f| f.path.as_str()),
        &opts.limits,
    )?;
    if let Some(declared) = manifest.view().runtime_package().hash() {
        if !same_hash(declared, &read.package_hash) {
            return Err(HostError::new(
                ErrorCode::VerifyPackageHashMismatch,
                "runtimePackage.hash does not match the package contents",
            )
            .with("declared", declared)
            .with("computed", &read.package_hash));
        }
    }
    if let Some(release) = &source.release {
        if release.app_id != manifest.name() || release.version != manifest.version() {
            return Err(HostError::new(
                ErrorCode::CatalogReleaseMismatch,
                format!(
                    "the catalog lists {}@{} but the package is {}@{}",
                    release.app_id,
                    release.version,
                    manifest.name(),
                    manifest.version()
                ),
            ));
        }
    }
    // 2-4. Signature and publisher trust (none for a dev install).
    if dev {
        if let Some(doc) = manifest.signature_doc.take() {
            let check = signature::check(Some(&doc), &mhash, &fdigest, opts.trusted_keys);
            ignored.push(match check {
                Err(e) => e,
                Ok(_) => HostError::new(
                    ErrorCode::VerifyUnsigned,
                    "app.signature.yaml is not used: a dev install is never trusted",
                ),
            });
        }
    }
    let sig = signature::check(
        manifest.signature_doc.as_ref(),
        &mhash,
        &fdigest,
        opts.trusted_keys,
    )?;

    let projection = projection::project(&ProjectionInput {
        manifest: &manifest,
        files: &read.files,
        package_hash: &read.package_hash,
        manifest_hash: &mhash,
    });
    let readiness = readiness::evaluate(&manifest, &read.files, opts.profile, &opts.state);
    Ok(Inspection {
        source: source.clone(),
        read,
        manifest,
        manifest_hash: mhash,
        files_digest: fdigest,
        signature: sig,
        has_lock,
        projection,
        readiness,
        ignored,
    })
}

impl Inspection {
    /// Why this package may not be installed, if anything: manifest errors, an incompatible
    /// runtime or SDK, end of life, or (outside sideload mode) a missing or untrusted signature.
    pub fn install_blocker(&self, sideload: bool) -> Option<HostError> {
        self.install_blocker_for(&self.signature, sideload)
    }

    /// [`Inspection::install_blocker`] with the signature as checked by the caller (the store
    /// checks it again against its own trusted keys).
    pub fn install_blocker_for(&self, sig: &SignatureCheck, sideload: bool) -> Option<HostError> {
        if let Some(e) = self.manifest.first_error() {
            return Some(e);
        }
        let blocked = self
            .readiness
            .checks
            .iter()
            .find(|c| c.kind == "compatibility" && c.outcome == Outcome::Blocked);
        if let Some(c) = blocked {
            let code = match c.code {
                Some("compat.end_of_life") => ErrorCode::CompatEndOfLife,
                Some("compat.invalid_range") => ErrorCode::CompatInvalidRange,
                _ => ErrorCode::CompatRequiresUnsatisfied,
            };
            let mut e = HostError::new(code, c.message.clone()).with("check", &c.key);
            if let Some(r) = &c.remediation {
                e = e.with("remediation", r);
            }
            return Some(e);
        }
        match (sig.trust, sideload) {
            (Trust::Unsigned, false) => Some(HostError::new(
                ErrorCode::VerifyUnsigned,
                "the package is not signed; install it in sideload mode (--sideload) if you trust its source",
            )),
            (Trust::UnknownKey, false) => Some(
                HostError::new(
                    ErrorCode::VerifyUntrustedKey,
                    format!(
                        "the package is signed by {}, which is not a trusted publisher key; trust the key (apphost trust add) or install in sideload mode (--sideload)",
                        sig.key_id.as_deref().unwrap_or("an unknown key")
                    ),
                )
                .with("keyId", &sig.key_id),
            ),
            _ => None,
        }
    }

    /// What validates but fails at run time ([`authoring`]): manifest checks, then the UI's
    /// HTML and CSS read again from the source, bounded (at most [`authoring::Bounds`] files,
    /// bytes and findings). A source that cannot be read again yields the manifest checks only.
    pub fn authoring_findings(&self, limits: &Limits) -> Vec<Finding> {
        let files: Vec<(&str, u64)> = self
            .read
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.size))
            .collect();
        let mut reader = PackageReader::open(&self.source, limits).ok();
        authoring::check(
            &self.manifest,
            &files,
            authoring::Bounds::default(),
            &mut |path, limit| {
                let r = reader.as_mut()?;
                let i = r.listing().entries.iter().position(|e| e.path == path)?;
                let size = r.listing().entries[i].size;
                let mut buf = vec![0; (size as usize).min(limit)];
                let n = r.entry(i).ok()?.fill(&mut buf).ok()?;
                buf.truncate(n);
                Some(buf)
            },
        )
    }

    pub fn error_count(&self) -> usize {
        self.manifest
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }

    /// The permission preview shown before consent.
    pub fn permissions(&self) -> Vec<Value> {
        self.manifest
            .view()
            .permissions()
            .map(|p| {
                json!({
                    "key": p.key_raw(),
                    "scope": p.scope_raw(),
                    "access": p.access_raw(),
                    "required": p.required(),
                    "reason": p.reason_raw(),
                    "domains": p.domains_raw().cloned().unwrap_or(json!([])),
                })
            })
            .collect()
    }

    /// The summary `apphost inspect --json` prints.
    pub fn summary(&self) -> Value {
        json!({
            "source": {
                "kind": self.source.kind,
                "origin": self.source.origin,
                "uri": self.source.uri(),
                "release": self.source.release,
            },
            "app": {
                "name": self.manifest.name(),
                "version": self.manifest.version(),
                "displayName": self.manifest.view().display_name(),
                "description": self.manifest.view().description(),
                "manifestVersion": self.manifest.manifest_version,
            },
            "hashes": {
                "packageHash": self.read.package_hash,
                "manifestHash": self.manifest_hash,
                "filesDigest": self.files_digest,
            },
            "trust": self.signature,
            "lockFile": self.has_lock,
            "files": { "count": self.read.files.len(), "bytes": self.read.total_bytes, "skipped": self.read.skipped },
            "findings": self.manifest.findings,
            "installable": self.install_blocker(true).is_none(),
            "permissions": self.permissions(),
            "projection": self.projection,
            "readiness": self.readiness,
        })
    }
}
