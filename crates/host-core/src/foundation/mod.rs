//! No product knowledge: errors, paths, limits, randomness, YAML, hashing, the host profile,
//! TypeScript stripping. Depends on nothing else in the crate.

pub mod budget_keys;
pub mod error;
pub mod hashing;
pub mod limits;
pub mod paths;
pub mod profile;
pub mod random;
pub mod service_health;
pub mod setting_keys;
pub mod typescript;
pub mod yaml;
