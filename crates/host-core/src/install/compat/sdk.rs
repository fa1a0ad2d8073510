//! Which SDK versions this host provides, by the standard's own compatibility rule, and how a
//! package's `requires.sdk` range fits them.
//!
//! The Agent App standard's changelog declares every release from 0.4.0 on backward compatible
//! with the apps of the release before it ("v0.3 apps continue to work in a v0.4 host", ...,
//! "v0.8 apps remain valid" in 0.9.0; 0.10.0 adds only optional fields). 0.3.0 is where the
//! SDK became a typed contract; 0.1/0.2 apps used call semantics 0.3 replaced. So an SDK of the
//! current release serves an app written for any release from 0.3.0 to it: a range matches when
//! any of those releases satisfies it (`^0.6.0` is an app for 0.6.0, which 0.10.0 keeps), not
//! only when the current version does (a caret range alone would refuse every older app).

use semver::Version;

use super::Range;
pub use crate::foundation::profile::provided_sdk_versions;

/// How a `requires.sdk` range fits this host's SDK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkFit {
    /// The highest provided release that satisfies the range.
    Provided(Version),
    /// Only a release newer than every one provided satisfies it: a newer AppHost may.
    NeedsNewer,
    /// No release, provided or future, satisfies it (it is older than the compatible line,
    /// or matches nothing): updating AppHost would not help.
    NeverProvided,
}

/// How `range` fits the SDK releases `provided` (oldest first).
pub fn sdk_fit(range: &Range, provided: &[Version]) -> SdkFit {
    if let Some(v) = provided.iter().rev().find(|v| range.matches(v)) {
        return SdkFit::Provided(v.clone());
    }
    match provided.last() {
        Some(newest) if range.admits_above(newest) => SdkFit::NeedsNewer,
        None => SdkFit::NeedsNewer,
        Some(_) => SdkFit::NeverProvided,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(range: &str) -> SdkFit {
        sdk_fit(
            &Range::parse(range).unwrap(),
            &provided_sdk_versions("0.10.0"),
        )
    }

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn the_provided_line_runs_from_0_3_to_the_current_release() {
        let p = provided_sdk_versions("0.10.0");
        assert_eq!(p.first(), Some(&v("0.3.0")));
        assert_eq!(p.last(), Some(&v("0.10.0")));
        assert_eq!(p.len(), 8, "{p:?}");
        // A patch release of the current line is provided as itself.
        assert_eq!(provided_sdk_versions("0.10.2").last(), Some(&v("0.10.2")));
    }

    #[test]
    fn the_standards_examples_and_quickstart_fit() {
        // docs/examples: content-factory ^0.10.0, customer-support ^0.6.0,
        // lightweight-content-ops ^0.7.0; the quickstart ^0.3.0.
        assert_eq!(fit("^0.10.0"), SdkFit::Provided(v("0.10.0")));
        assert_eq!(fit("^0.6.0"), SdkFit::Provided(v("0.6.0")));
        assert_eq!(fit("^0.7.0"), SdkFit::Provided(v("0.7.0")));
        assert_eq!(fit("^0.3.0"), SdkFit::Provided(v("0.3.0")));
        assert_eq!(fit(">=0.5"), SdkFit::Provided(v("0.10.0")));
        assert_eq!(fit("*"), SdkFit::Provided(v("0.10.0")));
    }

    #[test]
    fn a_newer_sdk_may_help_an_older_one_never_does() {
        assert_eq!(fit("^0.11.0"), SdkFit::NeedsNewer);
        assert_eq!(fit("^1.0.0"), SdkFit::NeedsNewer);
        assert_eq!(fit(">0.10.0"), SdkFit::NeedsNewer);
        assert_eq!(fit("^0.10.1"), SdkFit::NeedsNewer);
        assert_eq!(fit("^0.2.0"), SdkFit::NeverProvided);
        assert_eq!(fit("<0.3.0"), SdkFit::NeverProvided);
        assert_eq!(
            fit("0.6.1"),
            SdkFit::NeverProvided,
            "a patch never released"
        );
        assert_eq!(fit("^0.6.5"), SdkFit::NeverProvided);
        assert_eq!(fit(">=0.2 <0.3 || ^0.11"), SdkFit::NeedsNewer);
    }
}
