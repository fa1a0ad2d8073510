//! `evals/readiness.yaml` checks, by tier.

use super::{Ctx, Outcome};
use crate::install::compat::{provided_sdk_versions, sdk_fit, Range, SdkFit};
use crate::install::manifest::EVAL_TIERS;

pub(super) fn eval_tiers(cx: &mut Ctx) {
    let m = cx.m;
    for tier in EVAL_TIERS {
        for item in m.eval_checks(tier) {
            let check = item.check().unwrap_or("?").to_owned();
            let blocker = item.blocker();
            let (passed, subject): (Option<bool>, String) = match check.as_str() {
                "sdk_version" => {
                    let expect = item.expect().unwrap_or("*");
                    // As `requires.sdk`: any SDK release this host provides may satisfy it.
                    let provided = provided_sdk_versions(&cx.profile.sdk_version);
                    let ok = Range::parse(expect.trim_start_matches('='))
                        .ok()
                        .map(|r| matches!(sdk_fit(&r, &provided), SdkFit::Provided(_)));
                    (ok, format!("sdk {expect}"))
                }
                "capability_available" => {
                    let c = item.capability().unwrap_or("?").to_owned();
                    (Some(cx.profile.available(&c).is_some()), c)
                }
                "permission_granted" => {
                    let p = item.permission().unwrap_or("?").to_owned();
                    (Some(cx.granted(&p)), p)
                }
                "knowledge_bound" => {
                    let t = item.template().unwrap_or("?").to_owned();
                    (Some(cx.state.bound_knowledge.contains(&t)), t)
                }
                "tool_available" => {
                    let t = item.tool().unwrap_or("?").to_owned();
                    (Some(cx.state.available_tools.contains(&t)), t)
                }
                _ => (None, item.label(&check).to_owned()),
            };
            let declared = item
                .message()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("{check} {subject}"));
            let message = if passed.is_none() {
                format!("AppHost does not know the {tier} readiness check {check:?}, so it cannot confirm it ({declared})")
            } else {
                declared
            };
            let outcome = match (passed, tier) {
                (None, _) => Outcome::Unknown,
                (Some(true), _) => Outcome::Pass,
                (Some(false), "required") if blocker => Outcome::Blocked,
                (Some(false), "required") => Outcome::NeedsSetup,
                (Some(false), "recommended") => Outcome::Degraded,
                (Some(false), _) => Outcome::Notice,
            };
            let required = tier == "required";
            let c = cx.push(
                "eval",
                format!("{check}:{subject}"),
                required,
                outcome,
                message,
            );
            c.tier = Some(tier);
            if let Some(r) = item.remediation() {
                c.remediation = Some(r.to_owned());
            }
            if outcome == Outcome::Unknown {
                c.code = Some("eval.unknown_check");
            }
        }
    }
}
