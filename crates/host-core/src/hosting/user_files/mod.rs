//! `lime.files` on the host side: refs granted from the user's choice (`grant.rs`) and reading
//! only what a ref names (`access.rs`). The rows are `install/store/file_refs.rs`; the bridge
//! service is `capability/services/files.rs`; agent task attachments are `attachments.rs`.

pub mod access;
pub mod grant;

pub use grant::{grant_path, grant_upload, revoke, MAX_UPLOAD_BYTES};
