//! `validate`'s `authoring.permission_capability_undeclared` knows which capability uses each
//! permission scope without reaching up into `hosting/` (install code never does): its table
//! must be the capability registry's own, scope for scope.

use std::collections::BTreeSet;

use host_core::hosting::capability::registry::METHODS;
use host_core::install::manifest::authoring::SCOPE_CAPABILITIES;

#[test]
fn the_authoring_scope_table_is_the_registry_s() {
    let registry: BTreeSet<(&str, &str)> = METHODS
        .iter()
        .filter_map(|m| Some((m.scope?, m.capability().as_str())))
        .collect();
    let table: BTreeSet<(&str, &str)> = SCOPE_CAPABILITIES.iter().copied().collect();
    assert_eq!(table, registry);
}
