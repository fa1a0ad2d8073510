//! Moving JSON-RPC messages across the Wasm boundary: `alloc` + write in, `ptr << 32 | len` out,
//! every pointer and length bounds-checked against the guest's memory and the message cap.

use serde_json::Value;
use wasmi::{AsContext, AsContextMut, Memory, TypedFunc};

use crate::error::SandboxError;

/// Split a packed `ptr << 32 | len` return value.
pub fn unpack(v: i64) -> (usize, usize) {
    let v = v as u64;
    ((v >> 32) as usize, (v & 0xffff_ffff) as usize)
}

pub fn pack(ptr: u32, len: u32) -> i64 {
    ((u64::from(ptr) << 32) | u64::from(len)) as i64
}

/// Copy `len` bytes at `ptr` out of the guest (`len` <= `max`).
pub fn read_guest(
    ctx: impl AsContext,
    memory: &Memory,
    ptr: usize,
    len: usize,
    max: usize,
) -> Result<Vec<u8>, SandboxError> {
    if len > max {
        return Err(SandboxError::Protocol(format!(
            "wasm message of {len} bytes over {max}"
        )));
    }
    memory
        .data(&ctx)
        .get(ptr..ptr.saturating_add(len))
        .map(<[u8]>::to_vec)
        .ok_or_else(|| SandboxError::WasmAbi(format!("message {ptr}+{len} out of bounds")))
}

/// `alloc(len)` in the guest, then copy `bytes` there; returns the guest pointer.
pub fn write_guest(
    mut ctx: impl AsContextMut,
    memory: &Memory,
    alloc: &TypedFunc<i32, i32>,
    bytes: &[u8],
) -> Result<Result<u32, SandboxError>, wasmi::Error> {
    let len = bytes.len() as i32;
    let ptr = alloc.call(&mut ctx, len)? as u32;
    let data = memory.data_mut(&mut ctx);
    let Some(dst) = data.get_mut(ptr as usize..ptr as usize + bytes.len()) else {
        return Ok(Err(SandboxError::WasmAbi(format!(
            "alloc({len}) returned {ptr}, out of bounds"
        ))));
    };
    dst.copy_from_slice(bytes);
    Ok(Ok(ptr))
}

/// The module's JSON-RPC response to request `id`: its `result`, or its `error` as
/// `service.error`.
pub(crate) fn parse_reply(bytes: &[u8], id: u64) -> Result<Value, SandboxError> {
    let msg: Value = serde_json::from_slice(bytes)
        .map_err(|e| SandboxError::Protocol(format!("bad JSON from wasm: {e}")))?;
    if msg.get("id").and_then(Value::as_u64) != Some(id) {
        return Err(SandboxError::Protocol("wasm answered another id".into()));
    }
    if let Some(err) = msg.get("error") {
        return Err(SandboxError::Remote {
            code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .chars()
                .take(1024)
                .collect(),
        });
    }
    Ok(msg.get("result").cloned().unwrap_or(Value::Null))
}
