//! The seccomp filter bubblewrap installs before it starts the command: a denylist of system
//! calls that widen the kernel's attack surface and that no tool needs (kernel keyrings, BPF,
//! perf, userfaultfd, io_uring, module and kexec loading, mounts, ptrace, namespace switching),
//! and the two ways to hold memory outside every mount and rlimit (`memfd_create` files and
//! System V shared memory segments: RAM no tmpfs size, quota or `RLIMIT_AS` counts).
//!
//! Built with `seccompiler` (the filter compiler of Firecracker) rather than hand-written BPF.
//! A denied call fails with `EPERM`; every other call is allowed. Namespaces and rlimits remain
//! the wall; this only narrows what a process inside can ask the kernel for.

use std::collections::BTreeMap;

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};

/// The denied system calls.
const DENIED_SYSCALLS: &[libc::c_long] = &[
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_acct,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_syslog,
    libc::SYS_quotactl,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
    libc::SYS_setns,
    libc::SYS_unshare,
    // Memory that no mount, quota or rlimit bounds: a memfd is capped only per file by
    // `RLIMIT_FSIZE` (and `RLIMIT_NOFILE` of them fit), a segment written and detached leaves
    // `RLIMIT_AS`. POSIX shared memory lives in the sized `/dev/shm` and stays allowed.
    libc::SYS_memfd_create,
    libc::SYS_shmget,
];

/// The filter as bytes in the kernel's `struct sock_filter` layout, for `bwrap --seccomp FD`,
/// or why it cannot be built on this architecture.
pub(crate) fn filter_bytes() -> Result<Vec<u8>, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|err| err.to_string())?;
    // `c_long` is `i64` on every architecture seccompiler supports; the conversion keeps 32-bit
    // builds compiling.
    #[allow(clippy::useless_conversion)]
    let rules: BTreeMap<i64, Vec<seccompiler::SeccompRule>> = DENIED_SYSCALLS
        .iter()
        .map(|&nr| (i64::from(nr), Vec::new()))
        .collect();
    let errno = u32::try_from(libc::EPERM).map_err(|err| err.to_string())?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(|err| err.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|err: seccompiler::BackendError| err.to_string())?;
    let mut res = Vec::with_capacity(program.len() * 8);
    for instruction in &program {
        res.extend_from_slice(&instruction.code.to_ne_bytes());
        res.push(instruction.jt);
        res.push(instruction.jf);
        res.extend_from_slice(&instruction.k.to_ne_bytes());
    }
    Ok(res)
}
