//! 1,000 start/kill cycles (its own test binary: it counts this process's children and fds).

mod common;

use std::time::{Duration, Instant};

use common::{children, open_fds, Host};
use service_sandbox::ServiceProcess;

fn no_handler() -> service_sandbox::channel::HostHandler {
    Box::new(|_, _| Err((-32601, "no host methods".into())))
}

#[test]
fn a_thousand_start_kill_cycles_leave_no_orphan_and_no_descriptor() {
    let host = Host::setup();
    let spec = host.spec(&["/usr/bin/sleep", "1000"]);
    // warm up (lazily opened descriptors of the test harness, the cgroup root)
    drop(ServiceProcess::start(&spec, no_handler()).unwrap());
    let fds = open_fds();
    let cycles: usize = std::env::var("SERVICE_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let t = Instant::now();
    for i in 0..cycles {
        let mut svc = ServiceProcess::start(&spec, no_handler()).unwrap();
        if i % 2 == 0 {
            std::thread::sleep(Duration::from_millis(1)); // sometimes killed mid-setup, sometimes running
        }
        svc.kill();
    }
    eprintln!("{cycles} cycles in {:?}", t.elapsed());
    assert_eq!(children(), Vec::<i32>::new(), "orphans");
    assert_eq!(open_fds(), fds, "leaked descriptors");
    let leftover: Vec<_> = std::fs::read_dir(service_sandbox::cgroup::root().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("svc-{}-", std::process::id()))
        })
        .collect();
    assert!(leftover.is_empty(), "cgroups left: {leftover:?}");
}
