//! "Host a running app": the Host Bridge, the capability choke point, app surfaces, secrets,
//! model settings and the agent tool policy. Depends on [`crate::install`] and
//! [`crate::foundation`].

pub mod agent_tool_policy;
pub mod agent_tool_source;
pub mod app_knowledge;
pub mod app_secrets;
pub mod bridge;
pub mod capability;
pub mod knowledge_watch;
pub mod model_settings;
pub mod services;
pub mod surface;
pub mod tools;
pub mod user_files;
pub mod workflow;
