//! Resource limits applied to untrusted packages. Each limit has its own error code.

use crate::foundation::yaml::YamlLimits;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `APP.md` size (`manifest.too_large`). Layered YAML files share this bound.
    pub max_manifest_bytes: u64,
    /// Total size of the metadata files held in memory while reading a package (`APP.md`, the
    /// layered files AppHost reads, `evals/*.yaml`, the lock and signature files)
    /// (`manifest.metadata_too_large`). Never less than `max_manifest_bytes` in effect: see
    /// [`Limits::metadata_budget`].
    pub max_metadata_bytes: u64,
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
    /// YAML nodes, as written (`manifest.yaml_node_limit`) and after alias expansion
    /// (`manifest.yaml_alias_limit`).
    pub max_yaml_nodes: usize,
    /// Bytes of YAML scalar text that anchors and aliases may copy, per document
    /// (`manifest.yaml_expansion_limit`): an alias to a long string is one node, so the node
    /// limit alone does not bound memory.
    pub max_yaml_alias_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_manifest_bytes: 1024 * 1024,
            max_metadata_bytes: 4 * 1024 * 1024,
            max_files: 10_000,
            max_unpacked_bytes: 1024 * 1024 * 1024,
            max_compression_ratio: 200,
            ratio_floor_bytes: 1024 * 1024,
            max_yaml_depth: 64,
            max_yaml_nodes: 100_000,
            max_yaml_alias_bytes: 1024 * 1024,
        }
    }
}

/// Settings keys (in `host.db`) that override the default limits.
pub const SETTING_KEYS: &[&str] = &[
    "limits.maxFiles",
    "limits.maxUnpackedBytes",
    "limits.maxManifestBytes",
    "limits.maxCompressionRatio",
];

impl Limits {
    /// Applies one setting; `Err` names what is wrong with it.
    pub fn apply_setting(&mut self, key: &str, value: &str) -> Result<(), String> {
        let n: u64 = value
            .trim()
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{key} must be a positive integer, not {value:?}"))?;
        match key {
            "limits.maxFiles" => self.max_files = n as usize,
            "limits.maxUnpackedBytes" => self.max_unpacked_bytes = n,
            "limits.maxManifestBytes" => self.max_manifest_bytes = n,
            "limits.maxCompressionRatio" => self.max_compression_ratio = n,
            _ => {
                return Err(format!(
                    "unknown setting {key:?}; known settings: {}",
                    SETTING_KEYS.join(", ")
                ))
            }
        }
        Ok(())
    }

    pub fn yaml(&self) -> YamlLimits {
        YamlLimits {
            max_depth: self.max_yaml_depth,
            max_nodes: self.max_yaml_nodes,
            max_alias_bytes: self.max_yaml_alias_bytes,
        }
    }

    /// The total metadata bytes a package may hold in memory: `max_metadata_bytes`, raised to
    /// `max_manifest_bytes` when that is larger, so that one file within its own limit always fits.
    pub fn metadata_budget(&self) -> u64 {
        self.max_metadata_bytes.max(self.max_manifest_bytes)
    }
}
