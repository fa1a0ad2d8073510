//! What a frame learns about its host and itself: `lime.ui` answers (snapshot, locale, theme),
//! the routes it may navigate to, the domains it declared and the capabilities it can use.

use super::*;

impl BridgeHost {
    /// `lime.ui` methods, answered from the host's own state once the choke point allowed them.
    pub(super) fn ui_call(
        &mut self,
        store: &Store,
        mount: &Mount,
        method: UiMethod,
        call: &Call,
    ) -> Result<Value, CallError> {
        Ok(match method {
            UiMethod::RegisterRoute => return self.register_route(mount, call),
            UiMethod::ListRoutes => self.own_routes(mount),
            UiMethod::GetSnapshot => self.snapshot(store, mount),
            UiMethod::GetLocale => serde_json::to_value(LocaleInfo {
                locale: self.env.locale.clone(),
                timezone: self.env.timezone.clone(),
            })
            .unwrap_or(Value::Null),
            UiMethod::GetTheme => self.theme_payload(),
        })
    }

    /// The mount's app as the store has it now (cached until the store changes).
    pub(super) fn active_app(
        &self,
        store: &Store,
        mount: &Mount,
    ) -> Option<std::sync::Arc<ActiveApp>> {
        self.facts.active_app(store, &mount.app_id).ok()
    }

    pub(super) fn snapshot(&self, store: &Store, mount: &Mount) -> Value {
        let app = self.active_app(store, mount);
        let route = app_routes(app.as_deref(), mount)
            .into_iter()
            .next()
            .unwrap_or_else(|| "/".to_owned());
        let theme = self.theme();
        let setup = self.snapshot_setup(store, mount);
        let snapshot = HostSnapshot {
            app_id: mount.app_id.clone(),
            entry_key: mount.entry_key.clone(),
            entry_kind: mount.entry_kind.clone(),
            route,
            origin: mount.origin.clone(),
            locale: self.env.locale.clone(),
            timezone: self.env.timezone.clone(),
            workspace_id: self.env.workspace_id.clone(),
            tenant_id: self.env.tenant_id.clone(),
            theme_fields: theme.clone(),
            theme,
            capabilities: capability_summary(app.as_deref(), &self.profile),
            install_mode: setup.install_mode,
            readiness: setup.readiness,
            model: setup.model,
        };
        serde_json::to_value(snapshot).unwrap_or(Value::Null)
    }

    pub(super) fn theme(&self) -> ThemeSnapshot {
        ThemeSnapshot {
            theme_mode: self.env.theme_mode.clone(),
            effective_theme_mode: self.env.effective_theme_mode.clone(),
            color_scheme_id: self.env.color_scheme_id.clone(),
            tokens: self
                .env
                .tokens
                .iter()
                .filter(|(k, _)| k.starts_with("--lime-") || k.starts_with("--app-"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }

    pub(super) fn theme_payload(&self) -> Value {
        serde_json::to_value(self.theme()).unwrap_or(Value::Null)
    }
}

pub(super) fn app_routes(app: Option<&ActiveApp>, mount: &Mount) -> Vec<String> {
    let Some(app) = app else {
        return Vec::new();
    };
    let view = app.manifest.view();
    let own = view
        .entry(&mount.entry_key)
        .and_then(Entry::route)
        .map(str::to_owned);
    let mut routes: Vec<String> = own.into_iter().collect();
    for e in view.entries() {
        if let Some(r) = e.route() {
            if !routes.iter().any(|x| x == r) {
                routes.push(r.to_owned());
            }
        }
    }
    routes
}

/// `route` is `declared` or below it (`/notes` matches `/notes` and `/notes/1`).
pub(super) fn route_matches(declared: &str, route: &str) -> bool {
    let path = route.split(['?', '#']).next().unwrap_or(route);
    path == declared
        || (path.starts_with(declared)
            && (declared.ends_with('/') || path.as_bytes().get(declared.len()) == Some(&b'/')))
}

pub(super) fn is_http_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://"))
        && url.len() > "https://".len()
        && !url.chars().any(|c| c.is_control() || c.is_whitespace())
}

pub(super) fn declared_domains(app: Option<&ActiveApp>) -> Vec<String> {
    let Some(app) = app else {
        return Vec::new();
    };
    app.manifest
        .view()
        .permission_domains()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Capabilities the entry can use now, and the others it declares with the reason each is blocked.
pub(super) fn capability_summary(
    app: Option<&ActiveApp>,
    profile: &HostProfile,
) -> CapabilitySummary {
    let Some(app) = app else {
        return CapabilitySummary::default();
    };
    let mut summary = CapabilitySummary::default();
    for (c, _range) in app.manifest.view().requires().capabilities() {
        let c = c.to_owned();
        let offered =
            profile.capabilities.get(&c).is_some_and(|i| i.available) && registry::implements(&c);
        if offered {
            summary.available.push(c);
        } else {
            summary.blocked.push(BlockedCapability {
                capability: c,
                reason: "capability.not_available".into(),
                code: ErrorCode::CapabilityNotAvailable,
            });
        }
    }
    summary
}
