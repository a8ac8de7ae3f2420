import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownFolder } from '../leftovers.ts';

/**
 * The seccomp filter every sandbox runs under (bwrap --seccomp), built by libseccomp through its
 * Python binding (Debian's python3-seccomp), as Flatpak builds its own: calls an agent never needs
 * and that reach past its namespaces are refused with EPERM.
 */

/** Refused outright: another process's memory or descriptors, the kernel's own state, new mounts and namespaces. */
export const DENIED_SYSCALLS = [
  'ptrace', 'process_vm_readv', 'process_vm_writev', 'pidfd_getfd', 'kcmp',
  'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module',
  'bpf', 'perf_event_open', 'userfaultfd', 'keyctl', 'add_key', 'request_key',
  'mount', 'umount2', 'pivot_root', 'move_mount', 'open_tree', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'mount_setattr',
  'setns', 'unshare', 'chroot', 'open_by_handle_at', 'name_to_handle_at',
  'io_uring_setup', 'io_uring_enter', 'io_uring_register',
  'acct', 'swapon', 'swapoff', 'reboot', 'syslog', 'quotactl', 'lookup_dcookie', 'vhangup',
];

/**
 * The filter, in Python: default allow; the denied calls EPERM; clone with a namespace flag EPERM;
 * clone3 ENOSYS (its flags are behind a pointer no filter reads: libc falls back to clone); the
 * terminal ioctls that push input (TIOCSTI, TIOCLINUX) EPERM. Written to stdout as BPF.
 */
const BUILDER = `
import errno, os, sys, seccomp
f = seccomp.SyscallFilter(seccomp.ALLOW)
for name in sys.argv[1].split(','):
    try:
        f.add_rule(seccomp.ERRNO(errno.EPERM), name)
    except Exception:
        pass  # not a call on this architecture or this libseccomp
for flag in (0x10000000, 0x20000000, 0x40000000, 0x04000000, 0x08000000, 0x00020000, 0x02000000, 0x00000080):
    f.add_rule(seccomp.ERRNO(errno.EPERM), 'clone', seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
f.add_rule(seccomp.ERRNO(errno.ENOSYS), 'clone3')
for request in (0x5412, 0x541C):
    f.add_rule(seccomp.ERRNO(errno.EPERM), 'ioctl', seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
f.export_bpf(sys.stdout.buffer)
`;

/** The Python that has libseccomp's binding: HARNESS_SECCOMP_PYTHON, else Debian's own (a pyenv or venv python3 on PATH has none). */
export const seccompPython = () => process.env.HARNESS_SECCOMP_PYTHON || '/usr/bin/python3';

let built: { path: string } | { error: string } | undefined;

/** The compiled filter's file, built once per process; or why none can be built here. */
export function seccompFilter(): { path: string } | { error: string } {
  built ??= build();
  return built;
}

function build(): { path: string } | { error: string } {
  const python = seccompPython();
  const run = spawnSync(python, ['-c', BUILDER, DENIED_SYSCALLS.join(',')], { timeout: 10_000, maxBuffer: 1024 * 1024 });
  if (run.error) return { error: `no seccomp filter (${python}: ${(run.error as NodeJS.ErrnoException).code ?? run.error.message}; Debian package python3-seccomp)` };
  if (run.status !== 0 || run.stdout.length === 0) {
    const why = run.stderr.toString().trim().split('\n').at(-1) ?? `exit ${run.status}`;
    return { error: `no seccomp filter (${python}: ${why}; Debian package python3-seccomp)` };
  }
  // In this process's own folder: the temporary folder, which every sandbox masks.
  const dir = mkdtempSync(join(tmpdir(), ownFolder('seccomp')));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'filter.bpf');
  writeFileSync(path, run.stdout, { mode: 0o600 });
  return { path };
}
