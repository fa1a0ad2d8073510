use super::*;
use serde_json::json;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn every_15m() -> Vec<Declared> {
    vec![Declared {
        app: "a".into(),
        entry: "tick".into(),
        workflow: "w".into(),
        every: SignedDuration::from_mins(15),
    }]
}

#[test]
fn periods_parse_within_bounds_and_everything_else_has_a_stable_code() {
    assert_eq!(
        parse(&json!({"every": "15m"})),
        Ok(SignedDuration::from_mins(15))
    );
    assert_eq!(
        parse(&json!({"every": "2h"})),
        Ok(SignedDuration::from_hours(2))
    );
    assert_eq!(
        parse(&json!({"every": "1d"})),
        Ok(SignedDuration::from_hours(24))
    );
    for bad in [
        json!("15m"),
        json!({}),
        json!({"every": 15}),
        json!({"every": "15"}),
        json!({"every": "m"}),
        json!({"every": "-5m"}),
        json!({"every": "30s"}),
        json!({"every": "8d"}),
        json!({"every": "9999999m"}),
        json!({"every": "15m", "cron": "* * * * *"}),
        json!({"every": "1é"}),
    ] {
        assert_eq!(parse(&bad).unwrap_err().0, code::INVALID, "{bad}");
    }
}

#[test]
fn a_new_schedule_is_due_one_period_later_then_starts_once_per_slot() {
    let mut r = BTreeMap::new();
    let d = plan(&every_15m(), &mut r, at(0));
    assert_eq!(d, Due::default());
    assert_eq!(r["a/tick"].next_due, at(900).to_string());
    // Before the slot: nothing.
    assert_eq!(plan(&every_15m(), &mut r, at(899)), Due::default());
    // At the slot (within the grace): one start, the next slot a period later.
    let d = plan(&every_15m(), &mut r, at(905));
    assert_eq!(d.start.len(), 1);
    assert_eq!(d.start[0].slot, at(900).to_string());
    assert!(d.missed.is_empty());
    assert_eq!(r["a/tick"].next_due, at(1800).to_string());
    // Looking again at once starts nothing more.
    assert_eq!(plan(&every_15m(), &mut r, at(906)), Due::default());
}

#[test]
fn slots_passed_while_no_host_ran_are_reported_never_caught_up() {
    let mut r = BTreeMap::new();
    plan(&every_15m(), &mut r, at(0));
    // The host comes back 5 slots late: reported, no start, next slot after now.
    let d = plan(&every_15m(), &mut r, at(900 * 5 + 100));
    assert!(d.start.is_empty(), "{d:?}");
    assert_eq!(d.missed.len(), 1);
    assert_eq!(d.missed[0].missed, 5);
    assert_eq!(r["a/tick"].missed_total, 5);
    assert_eq!(r["a/tick"].next_due, at(900 * 6).to_string());
    assert!(r["a/tick"].last_missed.is_some());
    // And the next regular slot starts once.
    let d = plan(&every_15m(), &mut r, at(900 * 6 + 1));
    assert_eq!(d.start.len(), 1);
}

#[test]
fn a_schedule_no_longer_declared_is_dropped_and_a_changed_one_starts_over() {
    let mut r = BTreeMap::new();
    plan(&every_15m(), &mut r, at(0));
    let mut changed = every_15m();
    changed[0].every = SignedDuration::from_hours(1);
    plan(&changed, &mut r, at(10));
    assert_eq!(r["a/tick"].next_due, at(3610).to_string());
    plan(&[], &mut r, at(20));
    assert!(r.is_empty());
}

#[test]
fn records_survive_a_save_and_a_corrupt_file_counts_as_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("wf").join("schedules.json");
    let mut r = BTreeMap::new();
    plan(&every_15m(), &mut r, at(0));
    save(&path, &r).unwrap();
    assert_eq!(load(&path), r);
    std::fs::write(&path, b"{not json").unwrap();
    assert!(load(&path).is_empty());
}
