//! Reading, validating and compiling a Wasm service module, and the import/export check that
//! runs before any instantiation.

use std::io::Read;
use std::path::{Component, Path};

use wasmi::{CompilationMode, Config, EnforcedLimits, Engine, ExternType, Module, ValType};

use super::WasmLimits;
use crate::error::SandboxError;
use crate::spec::ServiceSpec;

/// The one import the host provides.
pub const IMPORT_MODULE: &str = "lime";
pub const IMPORT_NAME: &str = "lime_call";

/// A compiled module that passed validation and the ABI check.
pub struct LoadedModule {
    pub(super) engine: Engine,
    pub(super) module: Module,
}

/// Read `spec.program[0]` (`/app/<relative path>`) from the package dir: a regular file inside the
/// package (no `..`, no symlink resolving outside it), at most `max` bytes.
pub fn read_module(spec: &ServiceSpec, max: usize) -> Result<Vec<u8>, SandboxError> {
    let Some(prog) = spec.program.first() else {
        return Err(SandboxError::InvalidSpec("empty program".into()));
    };
    let rel = prog
        .strip_prefix("/app/")
        .map(Path::new)
        .filter(|r| r.components().all(|c| matches!(c, Component::Normal(_))))
        .ok_or_else(|| {
            SandboxError::InvalidSpec(format!("wasm module {prog} must be a path under /app"))
        })?;
    let invalid = |e: std::io::Error| SandboxError::InvalidSpec(format!("wasm module {prog}: {e}"));
    let package = spec.package_dir.canonicalize().map_err(invalid)?;
    let path = package.join(rel).canonicalize().map_err(invalid)?;
    if !path.starts_with(&package) {
        return Err(SandboxError::InvalidSpec(format!(
            "wasm module {prog} resolves outside the package"
        )));
    }
    let file = std::fs::File::open(&path).map_err(invalid)?;
    let meta = file.metadata().map_err(invalid)?;
    if !meta.is_file() {
        return Err(SandboxError::InvalidSpec(format!(
            "wasm module {prog} is not a file"
        )));
    }
    if meta.len() > max as u64 {
        return Err(too_large(meta.len(), max));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(invalid)?;
    if bytes.len() > max {
        return Err(too_large(bytes.len() as u64, max));
    }
    Ok(bytes)
}

fn too_large(len: u64, max: usize) -> SandboxError {
    SandboxError::WasmModuleTooLarge(format!("{len} bytes > cap {max}"))
}

fn engine() -> Engine {
    let mut config = Config::default();
    config
        .consume_fuel(true)
        // validate and translate every function now, not on first use
        .compilation_mode(CompilationMode::Eager)
        // bounds on function/global/table counts, params and body sizes (untrusted input)
        .enforced_limits(EnforcedLimits::strict())
        .set_max_recursion_depth(1024)
        .wasm_multi_memory(false);
    Engine::new(&config)
}

impl LoadedModule {
    /// Size cap, validation, compilation and the ABI check; no code of the module runs.
    pub fn compile(bytes: &[u8], limits: &WasmLimits) -> Result<Self, SandboxError> {
        if bytes.len() > limits.max_module_bytes {
            return Err(too_large(bytes.len() as u64, limits.max_module_bytes));
        }
        let engine = engine();
        let module = Module::new(&engine, bytes)
            .map_err(|e| SandboxError::WasmInvalidModule(truncate(&e.to_string())))?;
        check_module(&module)?;
        Ok(Self { engine, module })
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(512).collect()
}

fn is_func(ty: &ExternType, params: &[ValType], results: &[ValType]) -> bool {
    matches!(ty, ExternType::Func(f) if f.params() == params && f.results() == results)
}

/// Imports: only `lime.lime_call: (i32, i32) -> i64`. Exports: `memory`, `alloc: (i32) -> i32`,
/// `handle: (i32, i32) -> i64`.
pub fn check_module(module: &Module) -> Result<(), SandboxError> {
    use ValType::{I32, I64};
    for import in module.imports() {
        let (m, n) = (import.module(), import.name());
        if m == IMPORT_MODULE && n == IMPORT_NAME {
            if !is_func(import.ty(), &[I32, I32], &[I64]) {
                return Err(SandboxError::WasmImportRefused(format!(
                    "{m}.{n} must be (i32, i32) -> i64"
                )));
            }
            continue;
        }
        let why = if m.starts_with("wasi") {
            "WASI is not provided: a Wasm service has no filesystem, clock, random or environment"
        } else {
            "the host provides only lime.lime_call"
        };
        return Err(SandboxError::WasmImportRefused(format!(
            "{}.{}: {why}",
            truncate(m),
            truncate(n)
        )));
    }
    let export = |name: &str| module.exports().find(|e| e.name() == name);
    if !matches!(
        export("memory").map(|e| e.ty().clone()),
        Some(ExternType::Memory(_))
    ) {
        return Err(SandboxError::WasmAbi("missing export memory".into()));
    }
    for (name, params, results) in [
        ("alloc", &[I32][..], &[I32][..]),
        ("handle", &[I32, I32], &[I64]),
    ] {
        match export(name) {
            Some(e) if is_func(e.ty(), params, results) => {}
            Some(_) => {
                return Err(SandboxError::WasmAbi(format!(
                    "export {name} must be ({params:?}) -> {results:?}"
                )))
            }
            None => return Err(SandboxError::WasmAbi(format!("missing export {name}"))),
        }
    }
    Ok(())
}
