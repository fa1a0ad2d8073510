//! App surfaces: where an installed app's UI is served from and under which rules.
//!
//! [`origin`] gives each app its own origin (one host label per app, stable across versions);
//! [`csp`] builds the `Content-Security-Policy` and the iframe `sandbox` attribute from the
//! manifest and the user's grants. Tauri-free: the desktop shell and the browser mode both serve
//! through these functions.

pub mod csp;
pub mod dev_console;
pub mod origin;
pub mod serve;
