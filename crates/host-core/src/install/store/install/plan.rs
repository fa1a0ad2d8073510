//! Deciding what an install or update would do, or why it may not: the signature checked now,
//! the publisher against its pin, and the refusal when it changed.

use super::*;

impl Store {
    /// The package's signature checked now against this store's trusted keys (never the keys
    /// the caller inspected with).
    pub(super) fn verified_signature(&self, insp: &Inspection) -> HostResult<SignatureCheck> {
        signature::check(
            insp.manifest.signature_doc.as_ref(),
            &insp.manifest_hash,
            &insp.files_digest,
            &self.trusted_keys()?,
        )
    }

    /// Decides what installing `staged` would do, or why it may not.
    pub fn plan_with(
        &self,
        staged: &Staged,
        mode: InstallMode,
        options: PlanOptions,
    ) -> HostResult<InstallPlan> {
        let insp = &staged.inspection;
        let sig = self.verified_signature(insp)?;
        if let Some(e) = insp.install_blocker_for(&sig, options.sideload) {
            return Err(e);
        }
        let name = insp.manifest.name().to_owned();
        let version = insp.manifest.version().to_owned();
        let current = self.app_row(&name).ok();
        let versions = self.versions_of(&name)?;
        let mut from_version = None;
        match (mode, &current) {
            (InstallMode::Install, Some(app)) => {
                return Err(HostError::new(
                    ErrorCode::InstallAlreadyInstalled,
                    format!("{name} is already installed (version {}); use `apphost update` to change versions", app.active),
                )
                .with("app", &name)
                .with("installedVersion", &app.active))
            }
            (InstallMode::Update, None) => {
                return Err(HostError::new(ErrorCode::AppNotInstalled, format!("{name} is not installed; use `apphost install`")).with("app", &name))
            }
            (InstallMode::Update, Some(app)) => {
                if versions.contains(&version) {
                    let existing = self.version_row(&name, &version)?;
                    let same = crate::foundation::hashing::same_hash(&existing.package_hash, &insp.read.package_hash);
                    return Err(if same && app.active == version {
                        HostError::new(ErrorCode::InstallAlreadyInstalled, format!("{name}@{version} is already the active version"))
                    } else if same {
                        HostError::new(ErrorCode::InstallAlreadyInstalled, format!("{name}@{version} is already installed; use `apphost rollback {name}` to switch to it"))
                    } else {
                        HostError::new(ErrorCode::InstallVersionConflict, format!("{name}@{version} is installed with different contents; a release must bump its version"))
                            .with("installedPackageHash", &existing.package_hash)
                            .with("newPackageHash", &insp.read.package_hash)
                    }
                    .with("app", &name)
                    .with("version", &version));
                }
                if let (Ok(new), Ok(old)) = (semver::Version::parse(&version), semver::Version::parse(&app.active)) {
                    // A release replaces an `apphost dev` build of the same version
                    // (`1.0.0` over `1.0.0+dev.<ms>`): build metadata has no precedence.
                    let replaces_dev = is_dev_build(&old)
                        && new.cmp_precedence(&old) == std::cmp::Ordering::Equal
                        && self.is_dev(&name)?;
                    if new < old && !replaces_dev {
                        return Err(HostError::new(
                            ErrorCode::InstallNotNewer,
                            format!("{name}@{version} is older than the active {}; use `apphost rollback` to go back", app.active),
                        )
                        .with("app", &name));
                    }
                }
                from_version = Some(app.active.clone());
            }
            (InstallMode::Install, None) => {}
        }

        let existing_data = self.app_data().exists(&super::super::app_id(&name)?);
        let publisher = self.publisher_change(&name, mode, existing_data, &sig, options)?;
        if publisher.needs_acceptance() && !publisher.accepted {
            return Err(publisher_error(&name, mode, &publisher));
        }

        let old_perms = match &from_version {
            Some(v) => self.manifest(&name, v)?.view().permissions_raw().to_vec(),
            None => Vec::new(),
        };
        let permissions = diff_permissions(
            &old_perms,
            insp.manifest.view().permissions_raw(),
            &self.grants_of(&name)?,
        );
        let needs_consent = permissions
            .iter()
            .filter(|p| p.grant == "asked")
            .map(|p| p.key.clone())
            .collect();
        let prunes = match &from_version {
            Some(active) => versions.iter().filter(|v| *v != active).cloned().collect(),
            None => Vec::new(),
        };
        let new_bytes = staged.sink.entries().iter().map(|e| e.size).sum();
        Ok(InstallPlan {
            mode,
            app: name.clone(),
            version,
            from_version,
            package_hash: insp.read.package_hash.clone(),
            trust: sig.trust.as_str(),
            sideload: sig.trust.needs_sideload(),
            publisher,
            permissions,
            needs_consent,
            existing_data,
            prunes,
            new_blobs: staged.sink.entries().len(),
            new_bytes,
            options,
        })
    }

    /// The new signer against the pin. On install the pin matters only when kept data would be
    /// reattached: without data there is nothing of the old publisher's to hand over.
    pub(super) fn publisher_change(
        &self,
        name: &str,
        mode: InstallMode,
        existing_data: bool,
        sig: &SignatureCheck,
        options: PlanOptions,
    ) -> HostResult<PublisherChange> {
        let new = Signer::of(sig);
        let pin = if mode == InstallMode::Update || existing_data {
            self.publisher_pin(name)?
        } else {
            None
        };
        let old = pin.map(|mut p| {
            if let Some(pk) = &p.public_key {
                p.name = self
                    .trusted_keys()
                    .ok()
                    .and_then(|keys| keys.into_iter().find(|k| k.public_key == *pk))
                    .map(|k| k.name);
            }
            p
        });
        let status = match &old {
            None if existing_data || mode == InstallMode::Update => "unknown",
            None => "new",
            Some(o) if o.same_as(&new) => "same",
            Some(o) if !o.is_signed() => "signed",
            Some(_) => "changed",
        };
        let accepted = matches!(status, "changed" | "unknown") && options.accept_new_publisher;
        Ok(PublisherChange {
            status,
            old,
            new,
            accepted,
        })
    }
}

/// The refusal when the publisher is not the pinned one and the user did not accept it.
pub(super) fn publisher_error(name: &str, mode: InstallMode, p: &PublisherChange) -> HostError {
    let old = p
        .old
        .as_ref()
        .map_or_else(|| "not recorded".to_owned(), Signer::describe);
    let what = match (mode, p.status) {
        (InstallMode::Update, _) => format!("the installed version of {name} is signed by {old}"),
        (InstallMode::Install, "unknown") => {
            format!("data kept from an earlier install of {name} has no recorded publisher")
        }
        (InstallMode::Install, _) => {
            format!("data kept from an earlier install of {name} belongs to the publisher {old}")
        }
    };
    HostError::new(
        ErrorCode::InstallPublisherChanged,
        format!(
            "{what}, and this package is {}{}. Refused: if you trust the new publisher, run again with --accept-new-publisher (--yes and --sideload do not imply it)",
            if p.new.is_signed() { "signed by " } else { "" },
            p.new.describe()
        ),
    )
    .with("app", name)
    .with("publisher", p)
}
