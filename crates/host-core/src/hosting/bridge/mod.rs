//! Host Bridge v1 (`lime.agentApp.bridge`): the message contract between an app frame and the
//! host. [`message`] decodes and checks what a frame sends; nothing that fails a check reaches a
//! capability.

pub mod host;
pub mod message;
pub mod mounting;
pub mod mounts;
pub mod schema;
pub mod wire;
