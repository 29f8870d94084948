//! `examples/batch/`: the Kubernetes Indexed Job and the Slurm job array that run a sweep's
//! shards. The manifests must be well-formed and agree with the sweep's definition, the scripts
//! must parse, and their commands, run here with the batch systems' index variables set, must
//! merge into the bytes of a one-machine sweep.

use crate::common::{leasesim, report_files, same_reports, workdir};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

fn batch_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/batch")
}

/// The value of `NAME=...` in `sweep.sh`, or `NAME=${NAME:-...}`'s default.
fn setting(name: &str) -> String {
    let text = fs::read_to_string(batch_dir().join("sweep.sh")).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("sweep.sh sets no {name}"));
    let prefix = format!("${{{name}:-");
    match line.strip_prefix(&prefix) {
        Some(rest) => rest.trim_end_matches('}').to_string(),
        None => line.to_string(),
    }
}

fn yaml(file: &str) -> Yaml {
    let text = fs::read_to_string(batch_dir().join("k8s").join(file)).unwrap();
    let mut docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(docs.len(), 1, "{file}: one document");
    docs.remove(0)
}

/// The job's pod's first container.
fn container(job: &Yaml) -> &Yaml {
    &job["spec"]["template"]["spec"]["containers"][0]
}

fn env_value<'a>(c: &'a Yaml, name: &str) -> Option<&'a str> {
    c["env"]
        .as_vec()?
        .iter()
        .find(|e| e["name"].as_str() == Some(name))
        .and_then(|e| e["value"].as_str())
}

#[test]
fn the_manifests_agree_with_the_sweep_and_each_other() {
    let shards: i64 = setting("SHARDS").parse().unwrap();
    let job = yaml("sweep-job.yaml");
    assert_eq!(job["kind"].as_str(), Some("Job"));
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    assert_eq!(spec["completions"].as_i64(), Some(shards));
    assert_eq!(spec["parallelism"].as_i64(), Some(shards));
    assert_eq!(
        spec["template"]["spec"]["restartPolicy"].as_str(),
        Some("Never")
    );
    let c = container(&job);
    assert_eq!(
        c["command"].as_vec().unwrap().last().unwrap().as_str(),
        Some("/batch/run-shard.sh")
    );

    let merge = yaml("merge-job.yaml");
    assert_eq!(merge["kind"].as_str(), Some("Job"));
    let m = container(&merge);
    assert_eq!(
        m["command"].as_vec().unwrap().last().unwrap().as_str(),
        Some("/batch/merge.sh")
    );
    // Both see the same directory on the same claim.
    assert_eq!(env_value(c, "SWEEP_DIR"), env_value(m, "SWEEP_DIR"));
    let claim = |j: &Yaml| {
        j["spec"]["template"]["spec"]["volumes"]
            .as_vec()
            .unwrap()
            .iter()
            .find_map(|v| v["persistentVolumeClaim"]["claimName"].as_str())
            .map(str::to_string)
    };
    let volume = yaml("volume.yaml");
    assert_eq!(volume["kind"].as_str(), Some("PersistentVolumeClaim"));
    let name = volume["metadata"]["name"].as_str().map(str::to_string);
    assert_eq!(claim(&job), name);
    assert_eq!(claim(&merge), name);
}

#[test]
fn the_scripts_parse() {
    for f in fs::read_dir(batch_dir()).unwrap() {
        let path = f.unwrap().path();
        if path.is_file() && path.extension().is_some_and(|e| e == "sh" || e == "sbatch") {
            let out = Command::new("bash").arg("-n").arg(&path).output().unwrap();
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Every shard run as Kubernetes or Slurm would run it (half with each index variable), then
/// the merge: the results are byte for byte those of one machine. Fewer seeds than the
/// definition's, to keep the suite fast.
#[test]
fn the_shards_and_the_merge_give_the_one_machine_bytes() {
    let dir = workdir("batch");
    let shards: u32 = setting("SHARDS").parse().unwrap();
    let seeds = "2";
    let bin = env!("CARGO_BIN_EXE_leasesim");
    let shared = dir.join("shared");
    let script = |name: &str, index: Option<(&str, u32)>| {
        let mut cmd = Command::new("bash");
        cmd.arg(batch_dir().join(name))
            .env("LEASESIM", bin)
            .env("SWEEP_DIR", &shared)
            .env("SEEDS", seeds)
            .env_remove("JOB_COMPLETION_INDEX")
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("RUST_BACKTRACE");
        if let Some((var, i)) = index {
            cmd.env(var, i.to_string());
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{name} {index:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    for i in 0..shards {
        let var = if i % 2 == 0 {
            "JOB_COMPLETION_INDEX"
        } else {
            "SLURM_ARRAY_TASK_ID"
        };
        script("run-shard.sh", Some((var, i)));
    }
    script("merge.sh", None);

    // The same sweep on one machine, from the same definition.
    let scenario = setting("SCENARIO");
    let vary = setting("VARY");
    let vary: Vec<&str> = vary
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split_whitespace()
        .collect();
    let whole = dir.join("whole");
    let mut args = vec!["sweep", scenario.as_str()];
    args.extend(&vary);
    let whole_s = whole.to_str().unwrap();
    args.extend(["--seeds", seeds, "--out", whole_s]);
    let out = leasesim(&args, &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let report = |d: &Path| d.join(format!("{scenario}-sweep"));
    let (a, b) = (report(&shared), report(&whole));
    assert!(report_files(&a).contains(&"results.csv".to_string()));
    same_reports(&a, &b);
}
