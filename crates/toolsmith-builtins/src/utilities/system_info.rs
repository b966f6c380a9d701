//! `system_info`: what the host is (OS, architecture, kernel release, Toolsmith's version),
//! its memory, CPU count and load, and uptimes — read from std and `/proc`.
//!
//! Nothing secret: no environment variables, no host name, no user, no paths (neither the data
//! directory nor the working directory), no process ids. Every field is listed in
//! [`definition`]'s description and tested to be all there is.

use std::time::SystemTime;

use serde_json::{Map, Value, json};
use toolsmith_core::ToolDefinition;

use super::Fail;

const SECTIONS: &[&str] = &["platform", "memory", "cpu", "uptime", "all"];

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "system_info",
        "Get information about the server Toolsmith runs on: platform (os, arch, family, kernel \
         release, Toolsmith version), memory (total, available and this process's resident MB), \
         cpu (logical cores, load averages) and uptime (system and process seconds). Read-only; \
         never includes environment variables, host names or file paths.",
        json!({
            "type": "object",
            "properties": {
                "include": {
                    "type": "array",
                    "items": {"type": "string", "enum": SECTIONS},
                    "maxItems": 5,
                    "description": "Which sections: platform, memory, cpu, uptime, or all (default all)."
                }
            },
            "required": [],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "system", "info", "os", "platform", "memory", "ram", "cpu", "cores", "load", "uptime",
        "server", "host", "version", "machine", "hardware",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let wanted: Vec<&str> = match args.get("include") {
        None | Some(Value::Null) => vec!["all"],
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str().filter(|s| SECTIONS.contains(s)).ok_or_else(|| {
                    Fail::Args(format!("'include' may hold only: {}", SECTIONS.join(", ")))
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(Fail::Args(format!(
                "'include' must be an array of: {}",
                SECTIONS.join(", ")
            )));
        }
    };
    let all = wanted.contains(&"all") || wanted.is_empty();
    let on = |s: &str| all || wanted.contains(&s);
    let mut out = Map::new();
    if on("platform") {
        out.insert(
            "platform".into(),
            json!({
                "os": std::env::consts::OS,
                "arch": std::env::consts::ARCH,
                "family": std::env::consts::FAMILY,
                "kernel": read_proc("/proc/sys/kernel/osrelease").map(|s| s.trim().to_owned()),
                "toolsmithVersion": env!("CARGO_PKG_VERSION"),
            }),
        );
    }
    if on("memory") {
        let meminfo = read_proc("/proc/meminfo").unwrap_or_default();
        let status = read_proc("/proc/self/status").unwrap_or_default();
        out.insert(
            "memory".into(),
            json!({
                "totalMb": kb_field(&meminfo, "MemTotal:").map(mb),
                "availableMb": kb_field(&meminfo, "MemAvailable:").map(mb),
                "processRssMb": kb_field(&status, "VmRSS:").map(mb),
            }),
        );
    }
    if on("cpu") {
        let load: Option<Vec<f64>> = read_proc("/proc/loadavg").map(|l| {
            l.split_whitespace()
                .take(3)
                .filter_map(|n| n.parse().ok())
                .collect()
        });
        out.insert(
            "cpu".into(),
            json!({
                "logicalCores": std::thread::available_parallelism().map(usize::from).ok(),
                "loadAverage": load,
            }),
        );
    }
    if on("uptime") {
        let system = read_proc("/proc/uptime").and_then(|u| {
            u.split_whitespace()
                .next()
                .and_then(|s| s.parse::<f64>().ok())
        });
        out.insert(
            "uptime".into(),
            json!({
                "systemSeconds": system.map(f64::round),
                "processSeconds": process_seconds(system),
            }),
        );
    }
    let now: chrono::DateTime<chrono::Utc> = SystemTime::now().into();
    out.insert(
        "timestamp".into(),
        json!(now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
    );
    Ok(Value::Object(out))
}

/// Seconds since this process started: the system's uptime less the process's start time
/// (field 22 of `/proc/self/stat`, in clock ticks since boot).
fn process_seconds(system_uptime: Option<f64>) -> Option<f64> {
    let stat = read_proc("/proc/self/stat")?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let (_, after_name) = stat.rsplit_once(')')?;
    let start_ticks: f64 = after_name.split_whitespace().nth(19)?.parse().ok()?;
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    Some((system_uptime? - start_ticks / ticks).max(0.0).round())
}

/// A small kernel file, or `None` off Linux.
fn read_proc(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The kB value of a `Name:   1234 kB` line.
fn kb_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

fn mb(kb: u64) -> u64 {
    kb / 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string in `v`, keys included.
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
            Value::Object(map) => {
                for (k, v) in map {
                    out.push(k.clone());
                    strings(v, out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn all_sections_and_nothing_else() {
        let got = run(&json!({})).unwrap();
        let keys: Vec<&str> = got
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["cpu", "memory", "platform", "timestamp", "uptime"]);
        assert_eq!(got["platform"]["os"], std::env::consts::OS);
        assert!(got["cpu"]["logicalCores"].as_u64().unwrap() >= 1);
        if cfg!(target_os = "linux") {
            assert!(got["memory"]["totalMb"].as_u64().unwrap() > 0, "{got}");
            assert!(got["memory"]["processRssMb"].is_u64(), "{got}");
            assert_eq!(got["cpu"]["loadAverage"].as_array().map(Vec::len), Some(3));
            assert!(got["platform"]["kernel"].is_string());
            // This test process started moments ago, well after the system.
            let process = got["uptime"]["processSeconds"].as_f64().unwrap();
            let system = got["uptime"]["systemSeconds"].as_f64().unwrap();
            assert!(process < 3600.0 && process <= system + 1.0, "{got}");
        }
        let only = run(&json!({"include": ["memory"]})).unwrap();
        let keys: Vec<&str> = only
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["memory", "timestamp"]);
    }

    #[test]
    fn nothing_secret_leaks() {
        let got = run(&json!({"include": ["all"]})).unwrap();
        let mut all = Vec::new();
        strings(&got, &mut all);
        // The only strings are field names, the std platform constants, the kernel release, the
        // version and the timestamp: no paths (the data dir, the working directory) anywhere.
        let cwd = std::env::current_dir().unwrap().display().to_string();
        for s in &all {
            assert!(!s.contains('/'), "a path-like string: {s}");
            assert!(!s.contains(&cwd));
        }
        let known = [
            std::env::consts::OS,
            std::env::consts::ARCH,
            std::env::consts::FAMILY,
            env!("CARGO_PKG_VERSION"),
            got["platform"]["kernel"].as_str().unwrap_or(""),
            got["timestamp"].as_str().unwrap_or(""),
        ];
        let field_names = [
            "platform",
            "os",
            "arch",
            "family",
            "kernel",
            "toolsmithVersion",
            "memory",
            "totalMb",
            "availableMb",
            "processRssMb",
            "cpu",
            "logicalCores",
            "loadAverage",
            "uptime",
            "systemSeconds",
            "processSeconds",
            "timestamp",
        ];
        for s in &all {
            assert!(
                known.contains(&s.as_str()) || field_names.contains(&s.as_str()),
                "unexpected text in the output: {s}"
            );
        }
        // And so no environment variable's value appears, unless it is one of the constants
        // above (a shell's HOSTTYPE=x86_64, say).
        let text = got.to_string();
        for (name, value) in std::env::vars() {
            if value.len() >= 4
                && !known.contains(&value.as_str())
                && !field_names.contains(&value.as_str())
            {
                assert!(
                    !text.contains(&value),
                    "the value of ${name} appears in the output"
                );
            }
        }
        let host = read_proc("/proc/sys/kernel/hostname").unwrap_or_default();
        if host.trim().len() >= 4 {
            assert!(
                !text.contains(host.trim()),
                "the host name appears in the output"
            );
        }
    }

    #[test]
    fn bad_arguments() {
        let err = run(&json!({"include": ["env"]})).unwrap_err();
        assert_eq!(
            err.message(),
            "'include' may hold only: platform, memory, cpu, uptime, all"
        );
        let err = run(&json!({"include": "all"})).unwrap_err();
        assert!(
            err.message().starts_with("'include' must be an array"),
            "{err:?}"
        );
    }
}
