//! Resource limits applied to untrusted packages. Each limit has its own error code.

use crate::yaml::YamlLimits;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `APP.md` size (`manifest.too_large`). Layered YAML files share this bound.
    pub max_manifest_bytes: u64,
    /// Files per package (`archive.too_many_files`).
    pub max_files: usize,
    /// Total unpacked bytes per package (`archive.too_large`).
    pub max_unpacked_bytes: u64,
    /// Largest uncompressed/compressed ratio accepted for a zip entry bigger than
    /// `ratio_floor_bytes` (`archive.compression_ratio`).
    pub max_compression_ratio: u64,
    pub ratio_floor_bytes: u64,
    /// YAML nesting depth (`manifest.yaml_depth_limit`).
    pub max_yaml_depth: usize,
    /// YAML nodes after alias expansion (`manifest.yaml_alias_limit`).
    pub max_yaml_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_manifest_bytes: 1024 * 1024,
            max_files: 10_000,
            max_unpacked_bytes: 1024 * 1024 * 1024,
            max_compression_ratio: 200,
            ratio_floor_bytes: 1024 * 1024,
            max_yaml_depth: 64,
            max_yaml_nodes: 100_000,
        }
    }
}

impl Limits {
    pub fn yaml(&self) -> YamlLimits {
        YamlLimits {
            max_depth: self.max_yaml_depth,
            max_nodes: self.max_yaml_nodes,
        }
    }
}
