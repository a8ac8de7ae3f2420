#!/usr/bin/env python3
"""Runs a command and prints the CPU time of its whole process tree by kind of process.

    python3 scripts/cpu-by-process.py npx playwright test cells/ --workers=1 --reporter=dot

Linux, as root: the exact CPU of every process that exits comes from the kernel's process
accounting (acct(2), switched on for the command's life, into a file of its own); `/proc` is read
every 50 ms to tell each process's kind from its command line (Playwright's runner and worker,
Chromium's browser, renderers, GPU and utility processes, anything else by name). Chromium's
renderers are not children that `/usr/bin/time` waits for, and they hold much of a run's CPU.
Process accounting is machine-wide: while it is on, other processes' records go to the file too,
and only this command's tree is counted. CPU_BY_PROCESS_DUMP=file writes a line per process.
"""
import collections, ctypes, os, struct, subprocess, sys, tempfile, threading, time

libc = ctypes.CDLL(None, use_errno=True)


def kind(argv: list[str]) -> str:
    if len(argv) == 1:  # Chromium rewrites its command line as one string
        argv = argv[0].split(' ')
    line = ' '.join(argv)
    name = os.path.basename(argv[0])
    if 'crashpad' in name:
        return 'chromium crashpad handler'
    if 'chrom' in name or 'headless' in name:
        kind_flag = next((arg[len('--type='):] for arg in argv if arg.startswith('--type=')), None)
        if kind_flag is None:
            return 'chromium browser'
        if kind_flag == 'utility':
            sub = next((arg.split('=')[1].split('.')[-1] for arg in argv if arg.startswith('--utility-sub-type=')), '')
            return f'chromium utility {sub}'
        return f'chromium {kind_flag}' + (' (browser UI)' if '--top-chrome-webui' in argv else '')
    if name == 'node':
        if 'workerProcessEntry' in line:
            return 'node: Playwright worker'
        if 'playwright' in line and ' test' in line:
            return 'node: Playwright runner'
        return 'node: ' + ' '.join(argv[1:3])[:60]
    return name


def watch(root: int, kinds: dict[int, str], stop: threading.Event) -> None:
    """Every 50 ms, the kind of every process under `root`."""
    while not stop.is_set():
        children = collections.defaultdict(list)
        for entry in os.listdir('/proc'):
            if entry.isdigit():
                try:
                    stat = open(f'/proc/{entry}/stat').read()
                    children[int(stat[stat.rindex(')') + 2:].split()[1])].append(int(entry))
                except OSError:
                    pass
        todo = [root]
        while todo:
            pid = todo.pop()
            todo.extend(children.get(pid, []))
            try:
                argv = [a.decode(errors='replace') for a in open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\0') if a]
                if argv:
                    kinds[pid] = kind(argv)  # the latest: a shell wrapper execs Chromium in the same process
            except OSError:
                pass
        stop.wait(0.05)


def records(path: str) -> list[tuple[int, int, float, str]]:
    """(pid, ppid, CPU seconds, name) of each acct_v3 record (64 bytes; times as comp_t in 1/100 s)."""
    comp = lambda v: (v & 0x1FFF) << (3 * (v >> 13))
    data = open(path, 'rb').read()
    out = []
    for at in range(0, len(data) - 63, 64):
        fields = struct.unpack('<BBHIIIIIIfHH', data[at:at + 36])
        pid, ppid, utime, stime = fields[6], fields[7], fields[10], fields[11]
        out.append((pid, ppid, (comp(utime) + comp(stime)) / 100, data[at + 48:at + 64].split(b'\0')[0].decode(errors='replace')))
    return out


def main() -> int:
    if len(sys.argv) < 2:
        sys.exit('usage: cpu-by-process.py COMMAND [ARGS...]')
    fd, path = tempfile.mkstemp(prefix='cpu-by-process-')
    os.close(fd)
    if libc.acct(path.encode()) != 0:
        sys.exit(f'acct: {os.strerror(ctypes.get_errno())} (process accounting needs root on Linux)')
    kinds: dict[int, str] = {}
    stop = threading.Event()
    started = time.monotonic()
    try:
        command = subprocess.Popen(sys.argv[1:])
        watcher = threading.Thread(target=watch, args=(command.pid, kinds, stop))
        watcher.start()
        code = command.wait()
        wall = time.monotonic() - started
        time.sleep(0.5)  # what the command left behind exits, and is written
        stop.set()
        watcher.join()
    finally:
        libc.acct(None)
    exited = records(path)
    os.unlink(path)
    tree = {command.pid} | set(kinds)
    grown = True
    while grown:  # processes too short-lived for /proc, by their parent
        before = len(tree)
        tree |= {pid for pid, ppid, _, _ in exited if ppid in tree}
        grown = len(tree) > before
    cpu, count = collections.Counter(), collections.Counter()
    dump = open(os.environ['CPU_BY_PROCESS_DUMP'], 'w') if os.environ.get('CPU_BY_PROCESS_DUMP') else None
    for pid, ppid, seconds, name in exited:
        if pid in tree:
            what = kinds.get(pid, name)
            cpu[what] += seconds
            count[what] += 1
            if dump:
                print(pid, ppid, f'{seconds:.2f}', what, file=dump)
    print(f'wall {wall:.1f} s, CPU {sum(cpu.values()):.2f} s, exit {code}', file=sys.stderr)
    for what, seconds in cpu.most_common():
        if seconds >= 0.01:
            print(f'{seconds:8.2f} s {count[what]:5d} processes  {what}', file=sys.stderr)
    return code


sys.exit(main())
