//! Deny patterns: the spec's categories of dangerous shell commands, matched on the rendered
//! command after Unicode normalization (NFKC) and removal of invisible characters.
//!
//! This is a speed bump that refuses the obvious, never the wall: the bubblewrap sandbox is what
//! actually confines a command. Patterns are matched twice, on the normalized text and on the same
//! text with quotes and backslashes removed, so `r''m -rf` or `\rm -rf` do not slip through.

use std::fmt;
use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};
use serde::Serialize;
use unicode_normalization::UnicodeNormalization;

/// The family a deny pattern belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DenyCategory {
    DestructiveOps,
    DiskDestruction,
    SystemControl,
    ForkBomb,
    RemoteCodeExecution,
    ReverseShell,
    CodeInjection,
    Exfiltration,
    PrivilegeEscalation,
    EnvInjection,
    ContainerEscape,
    Persistence,
    EnvDump,
}

impl DenyCategory {
    /// The stable snake_case name of the category.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DestructiveOps => "destructive_ops",
            Self::DiskDestruction => "disk_destruction",
            Self::SystemControl => "system_control",
            Self::ForkBomb => "fork_bomb",
            Self::RemoteCodeExecution => "remote_code_execution",
            Self::ReverseShell => "reverse_shell",
            Self::CodeInjection => "code_injection",
            Self::Exfiltration => "exfiltration",
            Self::PrivilegeEscalation => "privilege_escalation",
            Self::EnvInjection => "env_injection",
            Self::ContainerEscape => "container_escape",
            Self::Persistence => "persistence",
            Self::EnvDump => "env_dump",
        }
    }
}

impl fmt::Display for DenyCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A command refused by a deny pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("blocked by safety policy: {category} ({pattern})")]
pub struct Denied {
    pub category: DenyCategory,
    /// A short human description of the matching pattern (never the command itself).
    pub pattern: &'static str,
}

impl Denied {
    /// A stable machine code for this error.
    #[must_use]
    pub fn code(&self) -> &'static str {
        "command_denied"
    }
}

use DenyCategory as C;

/// `(category, description, regex)`; regexes are case-insensitive and multi-line.
const PATTERNS: &[(DenyCategory, &str, &str)] = &[
    (
        C::DestructiveOps,
        "rm -rf",
        r"\brm\s.*(?:-[a-z]*(?:rf|fr)|-[a-z]*r[a-z]*\s.*-[a-z]*f|-[a-z]*f[a-z]*\s.*-[a-z]*r|--recursive|--no-preserve-root)",
    ),
    (C::DestructiveOps, "del /f", r"\bdel\s+/[fsq]\b"),
    (C::DestructiveOps, "rmdir /s", r"\brmdir\s+/s\b"),
    (C::DestructiveOps, "shred", r"\bshred\b"),
    (C::DestructiveOps, "find -delete", r"\bfind\b.*\s-delete\b"),
    (C::DiskDestruction, "mkfs", r"\bmkfs\b"),
    (C::DiskDestruction, "dd if=", r"\bdd\b.*\bif="),
    (
        C::DiskDestruction,
        "> /dev/sd*",
        r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk)",
    ),
    (
        C::DiskDestruction,
        "partitioning tools",
        r"\b(?:wipefs|fdisk|sfdisk|parted)\b",
    ),
    (
        C::SystemControl,
        "shutdown/reboot/poweroff",
        r"\b(?:shutdown|reboot|poweroff|halt)\b",
    ),
    (C::SystemControl, "init 0/6", r"\binit\s+[06]\b"),
    (C::SystemControl, "kill -1", r"\bkill\s+(?:-\S+\s+)*-1\b"),
    (C::ForkBomb, ":(){ :|:& };:", r":\s*\(\s*\)\s*\{"),
    (
        C::ForkBomb,
        "self-piping function",
        r"\(\s*\)\s*\{[^}]*\|[^}]*&",
    ),
    (
        C::RemoteCodeExecution,
        "curl | sh",
        r"\b(?:curl|wget|fetch)\b.*\|\s*(?:sudo\s+)?(?:ba|da|z|k|fi)?sh\b",
    ),
    (
        C::RemoteCodeExecution,
        "curl | interpreter",
        r"\b(?:curl|wget)\b.*\|\s*(?:sudo\s+)?(?:python[0-9.]*|perl|ruby|node|php)\b",
    ),
    (
        C::RemoteCodeExecution,
        "sh <(curl)",
        r"\bsh\s+<\s*\(\s*(?:curl|wget)\b",
    ),
    (C::ReverseShell, "/dev/tcp/", r"/dev/(?:tcp|udp)/"),
    (
        C::ReverseShell,
        "nc -e",
        r"\b(?:nc|ncat|netcat)\b.*\s-[a-z]*[ec]\b",
    ),
    (
        C::ReverseShell,
        "socat exec",
        r"\bsocat\b.*\b(?:exec|system):",
    ),
    (
        C::ReverseShell,
        "mkfifo + nc/sh",
        r"\bmkfifo\b.*\b(?:nc|ncat|netcat|sh|bash)\b",
    ),
    (
        C::ReverseShell,
        "interactive shell redirected",
        r"\b(?:ba|da|z)?sh\s+-i\b.*[<>]&",
    ),
    (
        C::ReverseShell,
        "scripted socket connect",
        r"\b(?:python[0-9.]*|perl|ruby|php)\b.*\bsocket\b.*\bconnect",
    ),
    (C::CodeInjection, "eval", r"\beval\b"),
    (
        C::CodeInjection,
        "base64 -d | sh",
        r"\bbase64\s+(?:-d|--decode|-D)\b.*\|\s*(?:ba|da|z)?sh\b",
    ),
    (
        C::CodeInjection,
        "xxd -r | sh",
        r"\bxxd\s+-r\b.*\|\s*(?:ba|da|z)?sh\b",
    ),
    (
        C::CodeInjection,
        "source /dev/stdin",
        r"(?:\bsource|\.)\s+/dev/stdin\b",
    ),
    (
        C::CodeInjection,
        "interpreter -c with exec/system",
        r"\b(?:python[0-9.]*|perl|ruby|node|php)\s+-[a-z]*[ce]\b.*\b(?:exec|eval|system|spawn|popen|__import__|child_process)\b",
    ),
    (
        C::Exfiltration,
        "curl -d @file",
        r"\bcurl\b.*(?:\s-d|--data\S*|\s-F|--form)\s*[= ]?\s*@",
    ),
    (
        C::Exfiltration,
        "curl --upload-file",
        r"\bcurl\b.*(?:\s-T\s|--upload-file)",
    ),
    (
        C::Exfiltration,
        "wget --post-file",
        r"\bwget\b.*--post-file",
    ),
    (
        C::Exfiltration,
        "scp/rsync to remote",
        r"\b(?:scp|sftp|rsync)\b.*\S+@\S+:",
    ),
    (
        C::Exfiltration,
        "nc < file",
        r"\b(?:nc|ncat|netcat)\b.*<\s*\S",
    ),
    (
        C::PrivilegeEscalation,
        "sudo/su/doas",
        r"\b(?:sudo|su|doas|pkexec)\b",
    ),
    (
        C::PrivilegeEscalation,
        "setuid bit",
        r"\bchmod\b.*(?:[ugoa]*\+[rwxt]*s|\s[2467][0-7]{3}\b)",
    ),
    (C::PrivilegeEscalation, "chown root", r"\bchown\b.*\broot\b"),
    (
        C::PrivilegeEscalation,
        "capabilities",
        r"\b(?:setcap|capsh)\b",
    ),
    (
        C::EnvInjection,
        "LD_PRELOAD=",
        r"\b(?:LD_[A-Z_]+|DYLD_[A-Z_]+|BASH_ENV|GLIBC_TUNABLES|PROMPT_COMMAND|IFS)\s*=",
    ),
    (C::EnvInjection, "export PATH=", r"\bexport\s+PATH\s*="),
    (C::ContainerEscape, "docker.sock", r"docker\.sock"),
    (
        C::ContainerEscape,
        "namespace tools",
        r"\b(?:nsenter|unshare|chroot)\b",
    ),
    (
        C::ContainerEscape,
        "/proc/1 or /proc/self/root",
        r"/proc/(?:1|self)/(?:root|mem|exe|cwd)\b",
    ),
    (
        C::ContainerEscape,
        "cgroup release_agent",
        r"release_agent|/sys/fs/cgroup|/sys/kernel/",
    ),
    (C::ContainerEscape, "mount", r"\bmount\s+-"),
    (C::ContainerEscape, "--privileged", r"--privileged\b"),
    (C::Persistence, "crontab", r"\bcrontab\b|/etc/cron"),
    (
        C::Persistence,
        "shell profile",
        r"\.(?:bashrc|bash_profile|bash_login|zshrc|zprofile|profile)\b",
    ),
    (C::Persistence, "ssh authorized_keys", r"authorized_keys"),
    (
        C::Persistence,
        "system startup",
        r"/etc/(?:rc\.local|init\.d|systemd|profile|ld\.so\.preload)|\bsystemctl\s+(?:--user\s+)?enable\b",
    ),
    (
        C::Persistence,
        "account files",
        r"/etc/(?:passwd|shadow|group|sudoers)",
    ),
    (
        C::EnvDump,
        "env/printenv",
        r"(?:^|[;&|(`]\s*)(?:env|printenv|set|export\s+-p|declare\s+-[a-z]*[px])\s*(?:$|[|;&>)`])|\bprintenv\b|\bcompgen\s+-v\b",
    ),
    (C::EnvDump, "/proc/*/environ", r"/proc/\S*/environ"),
];

struct CompiledPattern {
    category: DenyCategory,
    label: &'static str,
    regex: Regex,
}

static COMPILED: LazyLock<Vec<CompiledPattern>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        .map(|&(category, label, source)| CompiledPattern {
            category,
            label,
            regex: RegexBuilder::new(source)
                .case_insensitive(true)
                .multi_line(true)
                .build()
                // The patterns are constants; a test compiles every one of them.
                .unwrap_or_else(
                    #[allow(clippy::panic)]
                    |err| panic!("deny pattern {label:?} does not compile: {err}"),
                ),
        })
        .collect()
});

/// Characters that render as nothing and could split a denied word (`r\u{200B}m`).
fn is_invisible(ch: char) -> bool {
    matches!(ch,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{E0000}'..='\u{E007F}')
}

/// The text the deny patterns look at: NFKC-normalized (fullwidth and other compatibility forms
/// fold to ASCII) with invisible characters removed.
#[must_use]
pub fn normalize_for_matching(command: &str) -> String {
    command.nfkc().filter(|&ch| !is_invisible(ch)).collect()
}

/// Programs that run their next argument as code, with the option that says so: a shell's `-c`
/// (alone or among other letters: `bash -lc`), `python -c`, `perl`/`ruby`/`lua -e`, `node
/// -e`/`-p`/`--eval`/`--print`, `php -r`. Matched at the end of a template's text before a
/// placeholder, after [`normalize_for_matching`]; other options, each with at most one
/// argument, may stand between the program and its code option (`bash -o pipefail -c`,
/// `python3 -W ignore -c`, `node -r ./x.js -e`), and options and `--` after it (`sh -c -e`: a
/// shell's first operand after its options is still the script). An option's argument may be
/// taken for a script's name (`sh -e run.sh -c {{.x}}` is refused too): refusing is the safe side.
static CODE_OPTION_AT_END: LazyLock<Regex> = LazyLock::new(|| {
    let before = r"(?:^|[\s;&|(`!{])(?:\S*/)?";
    let options = r"(?:[-+]{1,2}[A-Za-z0-9][-A-Za-z0-9=]*(?:\s+[^-\s]\S*)?\s+)*";
    let source = format!(
        r"{before}(?P<program>(?:(?:ba|da|z|k|mk|fi|tc|c|y|a)?sh|python[0-9.]*|pypy[0-9.]*)\s+{options}-[A-Za-z]*c[A-Za-z]*|(?:perl|ruby|lua[0-9.]*)\s+{options}-[A-Za-z]*[eE]|(?:node|nodejs|deno)\s+{options}(?:-[A-Za-z]*[ep]|--eval|--print)|php[0-9.]*\s+{options}-r)\s+(?:[-+][A-Za-z]+\s+)*(?:--\s+)?\S*$"
    );
    // A constant pattern; a test runs it.
    #[allow(clippy::panic)]
    Regex::new(&source).unwrap_or_else(|err| panic!("code option pattern does not compile: {err}"))
});

/// When `before` (a template's text up to a placeholder) ends with a program and its code
/// option, the program and option as written (`bash -c`): a value placed there would run as
/// code, which is `eval` by another name.
#[must_use]
pub fn code_option_before(before: &str) -> Option<String> {
    let normalized = normalize_for_matching(before);
    let unquoted: String = normalized
        .chars()
        .filter(|ch| !matches!(ch, '\'' | '"' | '\\'))
        .collect();
    [&normalized, &unquoted].into_iter().find_map(|text| {
        CODE_OPTION_AT_END
            .captures(text)
            .and_then(|caps| caps.name("program"))
            .map(|m| m.as_str().split_whitespace().collect::<Vec<_>>().join(" "))
    })
}

/// Refuses `command` if it matches a deny pattern (or contains a NUL byte, which no shell can
/// receive and only an attacker sends).
///
/// Call it on the *rendered* command: values are single-quoted there, but a template such as
/// `sh -c "$1" _ {{.script}}` turns a value back into code, so values are screened too (see
/// `docs/command-tools.md` for the false-positive trade-off).
pub fn check_denied(command: &str) -> Result<(), Denied> {
    if command.contains('\0') {
        return Err(Denied {
            category: DenyCategory::CodeInjection,
            pattern: "NUL byte",
        });
    }
    let normalized = normalize_for_matching(command);
    let unquoted: String = normalized
        .chars()
        .filter(|ch| !matches!(ch, '\'' | '"' | '\\'))
        .collect();
    for pattern in COMPILED.iter() {
        if pattern.regex.is_match(&normalized) || pattern.regex.is_match(&unquoted) {
            return Err(Denied {
                category: pattern.category,
                pattern: pattern.label,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
