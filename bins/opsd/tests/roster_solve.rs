//! `opsd roster solve`, run as a user runs it: Instance1 solved to its proven optimum with a roster the
//! evaluator passes, a table for people, and every bad file or argument refused with exit 2, a message
//! on stderr and nothing on stdout; an instance with no roster exits 3 naming why.

use std::process::Output;

use opsd_rostering::{Roster, evaluate, parse};

const INSTANCE1: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../crates/rostering/tests/fixtures/instance1.txt");

fn roster_solve(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_opsd"))
        .args(["roster", "solve"])
        .args(args)
        .env_clear()
        .output()
        .expect("opsd runs")
}

fn write(text: &str) -> tempfile_path::TempPath {
    tempfile_path::TempPath::with(text)
}

/// A file in the system's temporary directory, removed when dropped.
mod tempfile_path {
    pub struct TempPath(pub std::path::PathBuf);

    impl TempPath {
        pub fn with(text: &str) -> Self {
            let path = std::env::temp_dir().join(format!("opsd-roster-{}.txt", uuid::Uuid::new_v4()));
            std::fs::write(&path, text).unwrap();
            Self(path)
        }

        pub fn as_str(&self) -> &str {
            self.0.to_str().unwrap()
        }
    }

    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

#[test]
fn instance1_is_solved_to_its_proven_optimum_with_a_roster_the_evaluator_passes() {
    let output = roster_solve(&[INSTANCE1, "--time-limit", "30", "--threads", "2", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.trim().lines().count(), 1, "exactly one JSON object: {stdout}");
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["objective"], 607);
    assert_eq!(answer["lowerBound"], 607);
    assert_eq!(answer["status"], "optimal");
    assert!(answer["seconds"].as_f64().unwrap() > 0.0);

    // The roster, in the file's order, judged again by the evaluator.
    let instance = parse(&std::fs::read_to_string(INSTANCE1).unwrap()).unwrap();
    let order: Vec<&str> =
        stdout.match_indices("\":[").map(|(at, _)| &stdout[stdout[..at].rfind('"').unwrap() + 1..at]).collect();
    let ids: Vec<&str> = instance.staff.iter().map(|employee| employee.id.as_str()).collect();
    assert_eq!(order, ids);
    let days = ids
        .iter()
        .map(|id| {
            let row = answer["roster"][id].as_array().unwrap();
            assert_eq!(row.len(), 14);
            row.iter().map(|day| instance.shift_index(day.as_str().unwrap())).collect()
        })
        .collect();
    let evaluation = evaluate(&instance, &Roster { days });
    assert!(evaluation.is_valid(), "{:?}", evaluation.violations);
    assert_eq!(evaluation.objective.total(), 607);
}

#[test]
fn without_json_a_person_reads_a_table_and_the_figures() {
    let output = roster_solve(&[INSTANCE1, "--time-limit", "30"]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("day") && lines[0].trim_end().ends_with("13"), "{stdout}");
    assert!(lines[1].starts_with("A ") && lines[1].contains(" D"), "{stdout}");
    assert!(stdout.contains("optimal: objective 607, lower bound 607 (gap 0.00 %)"), "{stdout}");
}

#[test]
fn each_bad_file_or_argument_exits_2_with_a_message_and_nothing_on_stdout() {
    let text = std::fs::read_to_string(INSTANCE1).unwrap();
    let missing = write(&text.replace("SECTION_COVER", "# no cover").replace("0,D,5,100,1", ""));
    let undeclared = write(&text.replace("A,2,D,2", "A,2,N,2"));
    let outside = write(&text.replace("H,7\n", "H,14\n"));
    let negative = write(&text.replace("0,D,5,100,1", "0,D,5,-100,1"));
    let min_above_max = write(&text.replace("A,D=14,4320,3360", "A,D=14,3000,3360"));
    let twice = write(&text.replace("B,D=14", "A,D=14"));
    let cases: [(Vec<&str>, &str); 9] = [
        (vec![missing.as_str(), "--time-limit", "5"], "SECTION_COVER"),
        (vec![undeclared.as_str(), "--time-limit", "5"], "shift N is not declared"),
        (vec![outside.as_str(), "--time-limit", "5"], "outside the horizon"),
        (vec![negative.as_str(), "--time-limit", "5"], "must not be negative"),
        (vec![min_above_max.as_str(), "--time-limit", "5"], "above MaxTotalMinutes"),
        (vec![twice.as_str(), "--time-limit", "5"], "employee A has two lines"),
        (vec!["/nonexistent/instance.txt", "--time-limit", "5"], "cannot read"),
        (vec![INSTANCE1, "--time-limit", "0"], "--time-limit"),
        (vec![INSTANCE1, "--time-limit", "5", "--threads", "0"], "--threads"),
    ];
    for (args, words) in cases {
        let output = roster_solve(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(stderr.contains(words), "{args:?} should name {words}: {stderr}");
    }
}

#[test]
fn an_instance_with_no_roster_exits_3_and_names_the_employee_and_the_rule() {
    // B must work 3360 minutes in 14 days but has every day off.
    let text = std::fs::read_to_string(INSTANCE1).unwrap().replace("B,5\n", "B,0,1,2,3,4,5,6,7,8,9,10,11,12,13\n");
    let file = write(&text);
    let output = roster_solve(&[file.as_str(), "--time-limit", "20", "--json"]);
    assert_eq!(output.status.code(), Some(3), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["status"], "infeasible");
    assert_eq!(answer["roster"], serde_json::Value::Null);
    assert_eq!(answer["infeasible"]["employee"], "B");
    let rules = answer["infeasible"]["rules"].as_array().unwrap();
    assert!(rules.contains(&"day_off".into()) && rules.contains(&"min_total_minutes".into()), "{answer}");
}
