//! A test that reads process-wide state cannot share its process with tests that change it, yet it need
//! not be a test binary of its own (one more link): the binary runs it again, alone, in a process of its
//! own. Two kinds of state call for it: a count in a `static` (a metric) that other tests add to, and
//! tracing's callsite cache — with one subscriber set (`set_default`) on one thread, another thread that
//! meets a span's callsite first caches it as disabled for every thread, so the test's spans vanish.
//! The test itself is `#[ignore]`d, so that the shared run passes it over, and a plain test calls
//! [`in_a_process_of_its_own`] with its name.

use std::process::Command;

/// Runs the ignored test `name` (its full path in this test binary: `module::test`) in a new process of
/// this binary, on its own; fails with that process's output unless the test ran and passed.
pub fn in_a_process_of_its_own(name: &str) {
    let binary = std::env::current_exe().expect("the test binary's path");
    let output = Command::new(binary)
        .args([name, "--exact", "--ignored", "--test-threads=1", "--nocapture"])
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = || format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "{name}, alone in its process, failed:\n{}",
        report()
    );
    // A name that matches nothing passes too: make sure the one test ran.
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "{name} did not run alone in its process:\n{}",
        report()
    );
}
