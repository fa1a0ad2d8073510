//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "apphost",
    version,
    about = "AppHost installs and runs Agent Apps. Without a subcommand it opens the desktop window.",
    after_help = "Exit codes and error codes: docs/cli.md. Data directory: $APPHOST_DATA_DIR or ~/.local/share/apphost."
)]
pub struct Cli {
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Show details in text output: hashes, every file an uninstall removes.
    #[arg(long, short = 'v', global = true)]
    pub verbose: bool,
    /// Use this data directory (overrides $APPHOST_DATA_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args, Clone)]
pub struct SourceArgs {
    /// A package folder (with APP.md), a .zip of one, or a catalog .json.
    pub source: PathBuf,
    /// With a catalog: the app to pick (needed when the catalog lists several).
    #[arg(long)]
    pub app: Option<String>,
    /// With a catalog: the version to pick (default: the highest).
    #[arg(long = "release", value_name = "VERSION")]
    pub release: Option<String>,
    /// Most files a package may hold.
    #[arg(long, value_name = "N")]
    pub max_files: Option<usize>,
    /// Most bytes a package may unpack to.
    #[arg(long, value_name = "BYTES")]
    pub max_unpacked_bytes: Option<u64>,
    /// Largest APP.md (and layered file) accepted, in bytes.
    #[arg(long, value_name = "BYTES")]
    pub max_manifest_bytes: Option<u64>,
}

#[derive(Debug, Args, Clone)]
pub struct InstallArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Consent without asking (for scripts): grants the permissions the package requires.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Allow a package that is unsigned or signed by a key this host does not trust.
    /// It is marked as sideloaded wherever it is shown.
    #[arg(long)]
    pub sideload: bool,
    /// Accept a package from another publisher than the installed version's (another signing
    /// key, or unsigned over signed), also when reinstalling over kept data. Never implied by
    /// --yes or --sideload.
    #[arg(long)]
    pub accept_new_publisher: bool,
    /// With an app id (`<app-id>[@<version>]` from a remote catalog): the release channel
    /// (default: stable; the channel is remembered for `apphost update`).
    #[arg(long, value_name = "CHANNEL")]
    pub channel: Option<String>,
    /// With an app id: the remote catalog to take it from (needed when several offer it).
    #[arg(long, value_name = "NAME")]
    pub catalog: Option<String>,
}

#[derive(Debug, Args, Clone, Default)]
pub struct OpenArgs {
    /// An installed app to open in the window, or a package file (`.agentapp`, `.zip`, or any
    /// path with a `/`) to open the install review sheet for.
    #[arg(value_name = "APP_ID|FILE")]
    pub app: Option<String>,
    /// The entry to open (default: the app's first UI entry).
    #[arg(long, value_name = "KEY", requires = "app")]
    pub entry: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the desktop window (the same as `apphost` without arguments): runs the
    /// `apphost-desktop` binary installed beside `apphost`, in place of this process.
    /// With an app id, the window opens that app's entry (default: its first UI entry).
    Open(OpenArgs),
    /// Check a package: parse, hash and validate it without installing.
    Validate(SourceArgs),
    /// Show what a package would add (projection, readiness, permissions) without installing.
    Inspect(SourceArgs),
    /// Install a package after showing what it adds and asking for consent.
    Install(InstallArgs),
    /// List installed apps.
    List,
    /// Install a newer version of an installed app (shows the permission diff, asks again):
    /// from a package, or by app id (or `--all`) from the remote catalog it was installed from.
    Update(super::catalog::UpdateArgs),
    /// Switch an app back to its previous version (data is kept; no downgrade migration runs).
    Rollback { app: String },
    /// Hide an app's entries without removing anything.
    Disable { app: String },
    /// Show a disabled app's entries again.
    Enable { app: String },
    /// Remove an app: choose what happens to its data.
    Uninstall(UninstallArgs),
    /// Check the store: database, files on disk, and (unless --quick) every file's hash.
    Verify {
        /// Only this app.
        app: Option<String>,
        /// Check presence and sizes only; do not rehash file contents.
        #[arg(long)]
        quick: bool,
    },
    /// List every file and row an uninstall would remove (changes nothing).
    CleanupPlan {
        app: String,
        /// Plan an uninstall that deletes the app's data (default: keeps it).
        #[arg(long)]
        delete_data: bool,
    },
    /// Zip an installed app's data to a new FILE (the archive uninstall's --export writes),
    /// removing nothing.
    Export {
        app: String,
        /// Where to write the zip; must not exist (never replaced).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Show the readiness of an installed app, with setup actions.
    Readiness { app: String },
    /// List the permissions an installed app declares and which are granted.
    Grants { app: String },
    /// Grant a permission the app declares (as "allow always" in a prompt).
    Grant { app: String, permission: String },
    /// Revoke a granted permission; the app's next call is asked again or denied.
    Revoke { app: String, permission: String },
    /// Bind, list or unbind the values of an app's secret slots (values from stdin, never shown).
    #[command(subcommand)]
    Secrets(super::secrets::SecretsCommand),
    /// Grant, list or revoke the files and folders an app may read (lime.files refs).
    #[command(subcommand)]
    Files(super::files::FilesCommand),
    /// MCP servers for lime.tools: add, list, remove, grant and revoke tools, call one.
    #[command(subcommand)]
    Tools(super::tools::ToolsCommand),
    /// Bind folders to an app's knowledge templates, search them, show their index status.
    #[command(subcommand)]
    Knowledge(super::knowledge::KnowledgeCommand),
    /// Start, list, show, cancel and answer apps' durable workflow runs.
    #[command(subcommand)]
    Workflow(super::workflow::WorkflowCommand),
    /// An app's backend services: list, start, stop, call a method, show the log.
    #[command(subcommand)]
    Services(super::services::ServicesCommand),
    /// List the artifacts an app keeps (lime.artifacts), read-only.
    Artifacts { app: String },
    /// List an app's evidence records (lime.evidence), or write its evidence pack to a file.
    Evidence {
        app: String,
        /// Only records of this kind.
        #[arg(long, value_name = "KIND")]
        kind: Option<String>,
        /// Write the evidence pack (JSON) to FILE, which must not exist (never replaced).
        #[arg(long, value_name = "FILE")]
        export: Option<PathBuf>,
    },
    /// Show the host's audit log.
    Audit {
        app: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Write app.lock.json (the per-file SHA-256 list) into a package folder.
    Lock { dir: PathBuf },
    /// Write app.lock.json and an Ed25519 app.signature.yaml into a package folder.
    Sign {
        dir: PathBuf,
        /// A secret key file made by `apphost keygen`.
        #[arg(long)]
        key: PathBuf,
    },
    /// Create an Ed25519 signing key (secret key file; prints the public key).
    Keygen {
        /// Where to write the secret key file (created with mode 0600; must not exist).
        #[arg(long)]
        out: PathBuf,
        /// A name for the key (shown when packages it signs are installed).
        #[arg(long, default_value = "publisher")]
        name: String,
    },
    /// Show or change host settings (limits for untrusted packages).
    Config {
        /// A setting key, e.g. limits.maxFiles (omit to list every setting).
        key: Option<String>,
        /// The new value (omit to show the key).
        value: Option<String>,
        /// Remove the setting (back to the default).
        #[arg(long, conflicts_with = "value")]
        unset: bool,
    },
    /// Remote app catalogs (TUF-signed): add, refresh, list, search, remove; `build` is the
    /// publisher's side.
    #[command(subcommand)]
    Catalog(super::catalog::CatalogCommand),
    /// Manage the publisher keys this host trusts.
    #[command(subcommand)]
    Trust(TrustCommand),
    /// Set, show or test the model the runtime uses (OpenAI-compatible endpoint).
    #[command(subcommand)]
    Model(super::model::ModelCommand),
    /// Develop an app: install FOLDER as a dev app (marked DEV, sideloaded), open it, and
    /// update it on every valid save (an invalid one keeps the last good version and prints
    /// the findings; a change that widens permissions asks again).
    Dev(super::dev::DevArgs),
    /// Create an app project NAME/: the package in NAME/app (APP.md, a UI, the SDK vendored),
    /// a unit test on the SDK's mock and a Playwright test; it validates and runs as written.
    New(super::author::NewArgs),
    /// Write the Host Bridge SDK's npm package (ESM build, .d.ts; this host's version).
    Sdk(super::author::SdkArgs),
    /// Serve the host UI and its API over loopback HTTP for a browser (first line: the URL to
    /// open, with a one-time sign-in token; with --json: {"url","port","pid"}). Ctrl-C stops it.
    Serve {
        /// The port to listen on (default: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Listen on this IP address instead of 127.0.0.1 (prints a warning when not loopback).
        #[arg(long, value_name = "ADDR")]
        listen: Option<std::net::IpAddr>,
    },
    /// Serve the App Server JSON-RPC (appserver.v0) for App Server clients.
    AppServer {
        /// One JSON-RPC message per line on stdin/stdout (logs on stderr).
        #[arg(long)]
        stdio: bool,
    },
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct DataChoice {
    /// Remove the package and projection; keep the app's data for a later reinstall.
    #[arg(long)]
    pub keep_data: bool,
    /// Remove everything the app owns, its data included.
    #[arg(long)]
    pub delete_data: bool,
    /// Zip the app's data to PATH, then remove everything.
    #[arg(long, value_name = "PATH")]
    pub export: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    pub app: String,
    #[command(flatten)]
    pub data: DataChoice,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Subcommand)]
pub enum TrustCommand {
    /// Trust a publisher key (a public key file from `apphost keygen`, or the key itself).
    Add {
        key_file: PathBuf,
        #[arg(long)]
        name: Option<String>,
    },
    /// List trusted keys.
    List,
    /// Stop trusting a key (by key id, or by full public key when several share an id).
    Remove { key_id: String },
}
