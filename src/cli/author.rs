//! `apphost new` and `apphost sdk`: arguments and output; the work is `crate::author`.

use std::path::PathBuf;

use clap::Args;

use super::output;
use crate::author::{self, Template};
use host_core::HostResult;

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The app's name: its id (lowercase; spaces become `-`) and the project folder's name.
    pub name: String,
    /// What the app starts as: `page` (lime.storage), `agent` (also lime.agent; needs a model) or
    /// `workflow` (a reviewed workflow run through lime.workflow; needs a model).
    #[arg(long, value_enum, default_value = "page")]
    pub template: Template,
    /// The folder to create the project in (default: the current folder).
    #[arg(long, value_name = "PARENT", default_value = ".")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct SdkArgs {
    /// The folder to write (absent or empty): package.json, README.md, dist/.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Also write the npm pack tarball (apphost-bridge-sdk-<version>.tgz) into the folder.
    #[arg(long)]
    pub pack: bool,
}

pub fn new_app(a: &NewArgs, json: bool) -> HostResult<i32> {
    let created = author::create_app(&a.dir, &a.name, a.template)?;
    let value = serde_json::to_value(&created).unwrap_or_default();
    if json {
        output::done(true, "", &value);
        return Ok(0);
    }
    let project = created.path.display();
    let package = created.package.display();
    out_line!(
        "Created {} ({}, template {}) in {project}: {} files, the SDK {} vendored in app/ui/sdk/.",
        created.display_name,
        created.app_id,
        created.template.as_str(),
        created.files,
        created.sdk_version
    );
    out_line!("The package is {package}; the tests and tooling beside it never ship.");
    if matches!(created.template, Template::Agent | Template::Workflow) {
        out_line!(
            "It uses lime.agent: until a model is set up (`apphost model set`, or Settings → Model) \
             it is needs-setup (\"Set up a model\") and its page does not open."
        );
    }
    if created.template == Template::Workflow {
        out_line!(
            "Its workflow's reviews are yours: answer them on AppHost's Tasks page (or \
             `apphost workflow respond <run-id> --approve`)."
        );
    }
    out_line!("Next:");
    out_line!("  apphost validate {package}          # then `apphost inspect` for readiness");
    out_line!("  apphost dev {package} --serve      # open the printed URL; every save reloads it");
    out_line!("  cd {project} && npm test            # unit tests on the SDK's mock (no install)");
    out_line!("  npm install && npm run test:e2e     # Playwright against the real host");
    Ok(0)
}

pub fn sdk(a: &SdkArgs, json: bool) -> HostResult<i32> {
    let written = author::write_sdk(&a.out, a.pack)?;
    let mut text = format!(
        "Wrote the Host Bridge SDK {} to {} ({} files: package.json, README.md, dist/).",
        written.version,
        written.path.display(),
        written.files
    );
    if let Some(t) = &written.tarball {
        text.push_str(&format!("\nnpm pack tarball: {}", t.display()));
    }
    output::done(
        json,
        &text,
        &serde_json::to_value(&written).unwrap_or_default(),
    );
    Ok(0)
}
