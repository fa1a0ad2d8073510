//! App authoring: `apphost new` (an app project from an embedded template, the SDK vendored)
//! and `apphost sdk` (the Host Bridge SDK's package, versioned with this host). Both write a
//! whole folder or nothing ([`write_tree`]). Templates and SDK are embedded by the root
//! `build.rs` (`templates/`, `bridge-sdk/`); see `templates/README.md`.

mod embedded;
mod scaffold;
mod sdk;
mod write_tree;

pub use embedded::{sdk_available, HOST_VERSION};
pub use scaffold::{create_app, derive_app_id, AppName, Created, Template};
pub use sdk::{write_sdk, WrittenSdk};
pub use write_tree::write_tree;
