//! The commit the binary is built from, for `opsd_build_info`: `OPSD_COMMIT` when the build sets
//! it (a container build has no `.git`), else git's, else `unknown`.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=OPSD_COMMIT");
    println!("cargo:rerun-if-changed=../../.git/HEAD");
    println!("cargo:rerun-if-changed=../../.git/refs/heads");
    let commit = std::env::var("OPSD_COMMIT").ok().filter(|commit| !commit.is_empty()).or_else(|| {
        let output = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    });
    println!("cargo:rustc-env=OPSD_COMMIT={}", commit.unwrap_or_else(|| "unknown".into()));
}
