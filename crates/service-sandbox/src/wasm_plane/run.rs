//! One call: a fresh store and instance, the input written through `alloc`, `handle` run in fuel
//! slices with the deadline and the caller's cancel checked between them, the output read back;
//! `lime_call` answered by the host handler.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wasmi::{
    AsContextMut, Caller, Extern, Linker, ResourceLimiter, Store, TrapCode, TypedResumableCall,
};

use super::abi::{pack, read_guest, unpack, write_guest};
use super::load::{LoadedModule, IMPORT_MODULE, IMPORT_NAME};
use super::WasmLimits;
use crate::cancel::CancelToken;
use crate::channel::HostHandler;
use crate::error::SandboxError;

/// Memory/table caps; a denial is remembered so the call fails with `service.wasm_memory_limit`
/// even when the guest copes with the failed grow.
struct Guard {
    memory_bytes: usize,
    table_elements: usize,
    denied: Option<String>,
}

impl ResourceLimiter for Guard {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> Result<bool, wasmi_core::LimiterError> {
        if desired > self.memory_bytes {
            self.denied = Some(format!(
                "memory of {desired} bytes over the {} byte limit",
                self.memory_bytes
            ));
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> Result<bool, wasmi_core::LimiterError> {
        if desired > self.table_elements {
            self.denied = Some(format!(
                "table of {desired} elements over the {} limit",
                self.table_elements
            ));
            return Ok(false);
        }
        Ok(true)
    }

    fn instances(&self) -> usize {
        1
    }

    fn tables(&self) -> usize {
        1
    }

    fn memories(&self) -> usize {
        1
    }
}

struct CallState {
    guard: Guard,
    handler: HostHandler,
    fault: Option<SandboxError>,
    host_calls: usize,
    max_host_calls: usize,
    max_message: usize,
    fuel_setup: u64,
    deadline: Instant,
    cancel: CancelToken,
}

/// The error to report for `err`: a recorded limit/fault first, then the trap itself.
fn classify(err: &wasmi::Error, state: &mut CallState) -> SandboxError {
    if let Some(why) = state.guard.denied.take() {
        return SandboxError::WasmMemoryLimit(why);
    }
    if let Some(fault) = state.fault.take() {
        return fault;
    }
    match err.as_trap_code() {
        Some(TrapCode::OutOfFuel) => SandboxError::WasmFuelExhausted("setup fuel".into()),
        Some(code) => SandboxError::WasmTrap(code.to_string()),
        None => SandboxError::WasmTrap(err.to_string().chars().take(512).collect()),
    }
}

fn linker(module: &LoadedModule) -> Result<Linker<CallState>, SandboxError> {
    let mut linker = Linker::new(&module.engine);
    linker
        .func_wrap(IMPORT_MODULE, IMPORT_NAME, lime_call)
        .map_err(|e| SandboxError::StartFailed(e.to_string()))?;
    Ok(linker)
}

/// The host import: a `lime.*` JSON-RPC request from the guest, answered by the host handler;
/// the JSON-RPC response goes back through the guest's `alloc`.
fn lime_call(mut caller: Caller<'_, CallState>, ptr: i32, len: i32) -> Result<i64, wasmi::Error> {
    let fail = |caller: &mut Caller<'_, CallState>, e: SandboxError| {
        let msg = e.to_string();
        caller.data_mut().fault = Some(e);
        wasmi::Error::new(msg)
    };
    let (Some(memory), Some(alloc)) = (
        caller.get_export("memory").and_then(Extern::into_memory),
        caller.get_export("alloc").and_then(Extern::into_func),
    ) else {
        return Err(fail(
            &mut caller,
            SandboxError::WasmAbi("exports gone".into()),
        ));
    };
    let alloc = alloc
        .typed::<i32, i32>(&caller)
        .map_err(|e| wasmi::Error::new(e.to_string()))?;
    caller.data_mut().host_calls += 1;
    let (calls, max_calls, max) = {
        let s = caller.data();
        (s.host_calls, s.max_host_calls, s.max_message)
    };
    if calls > max_calls {
        let e = SandboxError::Protocol(format!("more than {max_calls} lime_call per call"));
        return Err(fail(&mut caller, e));
    }
    if Instant::now() >= caller.data().deadline {
        return Err(fail(&mut caller, SandboxError::Timeout));
    }
    if caller.data().cancel.is_cancelled() {
        return Err(fail(&mut caller, SandboxError::Cancelled));
    }
    let bytes = match read_guest(
        &caller,
        &memory,
        ptr as u32 as usize,
        len as u32 as usize,
        max,
    ) {
        Ok(b) => b,
        Err(e) => return Err(fail(&mut caller, e)),
    };
    let reply = answer(&mut caller.data_mut().handler, &bytes);
    // `alloc` for the answer runs on setup fuel, not on what is left of the current slice
    // (bounded: max_host_calls x fuel_setup on top of fuel_per_call)
    let fuel = caller.get_fuel()?.saturating_add(caller.data().fuel_setup);
    caller.set_fuel(fuel)?;
    let out = serde_json::to_vec(&reply).unwrap_or_default();
    if out.len() > max {
        let e = SandboxError::Protocol("lime_call answer over the message cap".into());
        return Err(fail(&mut caller, e));
    }
    match write_guest(&mut caller, &memory, &alloc, &out)? {
        Ok(p) => Ok(pack(p, out.len() as u32)),
        Err(e) => Err(fail(&mut caller, e)),
    }
}

/// The same rule as the stdio channel: only `lime.<ns>.<method>` reaches the host handler.
fn answer(handler: &mut HostHandler, bytes: &[u8]) -> Value {
    let Ok(msg) = serde_json::from_slice::<Value>(bytes) else {
        return json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}});
    };
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    if !method.starts_with("lime.") {
        return json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}});
    }
    match handler(method, msg.get("params").cloned().unwrap_or(Value::Null)) {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    }
}

/// Run one call; always hands the handler back. `cancel` ends it between two fuel slices
/// (`service.cancelled`).
pub fn call(
    module: &LoadedModule,
    limits: &WasmLimits,
    handler: HostHandler,
    request: &Value,
    timeout: Duration,
    cancel: &CancelToken,
) -> (Result<Vec<u8>, SandboxError>, HostHandler) {
    let state = CallState {
        guard: Guard {
            memory_bytes: limits.memory_bytes,
            table_elements: limits.table_elements,
            denied: None,
        },
        handler,
        fault: None,
        host_calls: 0,
        max_host_calls: limits.max_host_calls,
        max_message: limits.max_message,
        fuel_setup: limits.fuel_setup,
        deadline: Instant::now() + timeout,
        cancel: cancel.clone(),
    };
    let mut store = Store::new(&module.engine, state);
    store.limiter(|s| &mut s.guard);
    let outcome = run(module, limits, &mut store, request);
    let outcome = match outcome {
        Ok(Ok(bytes)) => match store.data_mut().guard.denied.take() {
            // the guest survived a refused grow: still a limit hit
            Some(why) => Err(SandboxError::WasmMemoryLimit(why)),
            None => Ok(bytes),
        },
        Ok(Err(e)) => Err(e),
        Err(e) => Err(classify(&e, store.data_mut())),
    };
    (outcome, store.into_data().handler)
}

/// A store and an instance of `module`, dropped again.
pub fn instantiate_once(module: &LoadedModule, limits: &WasmLimits) -> Result<(), SandboxError> {
    let handler: HostHandler = Box::new(|_, _| Err((-32601, "none".into())));
    let state = CallState {
        guard: Guard {
            memory_bytes: limits.memory_bytes,
            table_elements: limits.table_elements,
            denied: None,
        },
        handler,
        fault: None,
        host_calls: 0,
        max_host_calls: 0,
        max_message: limits.max_message,
        fuel_setup: limits.fuel_setup,
        deadline: Instant::now(),
        cancel: CancelToken::default(),
    };
    let mut store = Store::new(&module.engine, state);
    store.limiter(|s| &mut s.guard);
    let linker = linker(module)?;
    let started = store
        .set_fuel(limits.fuel_setup)
        .and_then(|_| linker.instantiate_and_start(&mut store, &module.module));
    match started {
        Ok(_) => Ok(()),
        Err(e) => Err(classify(&e, store.data_mut())),
    }
}

type Outcome = Result<Result<Vec<u8>, SandboxError>, wasmi::Error>;

fn run(
    module: &LoadedModule,
    limits: &WasmLimits,
    store: &mut Store<CallState>,
    request: &Value,
) -> Outcome {
    let input = serde_json::to_vec(request).unwrap_or_default();
    if input.len() > limits.max_message {
        return Ok(Err(SandboxError::Protocol(format!(
            "request of {} bytes over {}",
            input.len(),
            limits.max_message
        ))));
    }
    let linker = match linker(module) {
        Ok(l) => l,
        Err(e) => return Ok(Err(e)),
    };
    store.set_fuel(limits.fuel_setup)?;
    let instance = linker.instantiate_and_start(&mut *store, &module.module)?;
    let (Some(memory), Ok(alloc), Ok(handle)) = (
        instance.get_memory(&*store, "memory"),
        instance.get_typed_func::<i32, i32>(&*store, "alloc"),
        instance.get_typed_func::<(i32, i32), i64>(&*store, "handle"),
    ) else {
        return Ok(Err(SandboxError::WasmAbi(
            "exports missing after instantiation".into(),
        )));
    };
    store.set_fuel(limits.fuel_setup)?;
    let ptr = match write_guest(&mut *store, &memory, &alloc, &input)? {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    let packed = match metered(limits, store, |s| {
        handle.call_resumable(s, (ptr as i32, input.len() as i32))
    })? {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    let (out_ptr, out_len) = unpack(packed);
    Ok(read_guest(
        &*store,
        &memory,
        out_ptr,
        out_len,
        limits.max_message,
    ))
}

/// Drive a resumable call in fuel slices: out of total fuel = `service.wasm_fuel_exhausted`,
/// past the deadline = `service.timeout`, the caller's token cancelled = `service.cancelled`
/// (seen within one slice: the instance is dropped with the store, nothing of it is kept).
fn metered(
    limits: &WasmLimits,
    store: &mut Store<CallState>,
    start: impl FnOnce(&mut Store<CallState>) -> Result<TypedResumableCall<i64>, wasmi::Error>,
) -> Result<Result<i64, SandboxError>, wasmi::Error> {
    let slice = limits.fuel_slice.max(1).min(limits.fuel_per_call);
    let mut granted = slice;
    store.set_fuel(slice)?;
    let mut call = start(store)?;
    loop {
        match call {
            TypedResumableCall::Finished(v) => return Ok(Ok(v)),
            TypedResumableCall::HostTrap(trap) => {
                let err = trap.host_error();
                return Ok(Err(classify(err, store.data_mut())));
            }
            TypedResumableCall::OutOfFuel(pending) => {
                if granted >= limits.fuel_per_call {
                    return Ok(Err(SandboxError::WasmFuelExhausted(format!(
                        "{} fuel used",
                        limits.fuel_per_call
                    ))));
                }
                if store.data().cancel.is_cancelled() {
                    return Ok(Err(SandboxError::Cancelled));
                }
                if Instant::now() >= store.data().deadline {
                    return Ok(Err(SandboxError::Timeout));
                }
                let more = slice.min(limits.fuel_per_call - granted);
                granted += more;
                store.as_context_mut().set_fuel(more)?;
                call = pending.resume(&mut *store)?;
            }
        }
    }
}
