//! The README's quick start as a newcomer meets it: `just run` from a fresh clone in a private
//! directory (see `scripts/check-quick-start.sh`), serving this build's binary; as root, `just
//! cluster` from that clone too.

use std::path::Path;
use std::process::Command;

#[test]
fn just_run_works_from_a_fresh_clone_in_a_private_directory() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(repo.join("scripts/check-quick-start.sh"))
        .arg(env!("CARGO_BIN_EXE_opsd"))
        .output()
        .expect("running scripts/check-quick-start.sh (needs bash, git, just, curl and psql)");
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{report}");
    assert!(report.contains("its incident line created an incident"), "{report}");
    assert!(report.contains("the console line signs the demo's admin in once"), "{report}");
    let user = Command::new("id").arg("-u").output().expect("id -u").stdout;
    if user == b"0\n" {
        assert!(report.contains("just cluster in a 0700 clone elects a leader"), "{report}");
    }
}
