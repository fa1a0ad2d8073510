//! Capability calls: the one choke point every `lime.*` call passes, whatever its transport.
//! [`decision`] is the pure decision table (declared ∩ ready ∩ granted ∩ policy, deny wins).

pub mod decision;
pub mod dispatch;
pub mod facts;
pub mod registry;
pub mod services;
