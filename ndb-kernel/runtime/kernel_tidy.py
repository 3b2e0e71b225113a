#!/usr/bin/env python3
"""Kernel tidy: fail if kernel block code or the simulator uses a banned call.

Why: blocks must be deterministic (DESIGN.md section 3). They get time, timers,
randomness, network and file IO only through their BlockContext, so the simulator can
run a whole cluster in one thread on virtual time and replay a seed bit for bit. One
stray steady_clock read or rand() call in a block silently breaks that, so this check
runs as a unit test (ctest label `unit`). The model is TigerBeetle's src/tidy.zig.

What is scanned (C++ files: .h .hh .hpp .cc .cpp .cxx .ipp .inc), relative to --root
(the ndb-kernel/ directory):
    coordinator/, dictionary/, distribution/, local_query/, membership/
               the kernel blocks and their tests (a folder per block family)
    fs_client/ the block side of file IO (requests to the file system block)
    protocol/  what blocks and clients agree on (messages, codecs, distribution)
    testing/   the simulated cluster the block tests run on
    sim/       the deterministic simulator and its tests
    runtime/   the block-facing runtime API (signal, block, BlockContext, test blocks),
               except ALLOWED_FILES below
ALLOWED_FILES are the real threaded runtime, which legitimately owns threads and the
steady clock, and its tests.

Comments, string literals and character literals are blanked out before matching, so
documentation may name a banned call. Member calls (`x.open(`, `p->socket(`) are not
matched by the file and socket rules, so code may call methods of that name on a
runtime-provided IO interface; the free functions stay banned. The check is textual,
so it cannot tell a declaration from a call: declaring a function named `open` or
`socket` in a scanned file is flagged too (name such methods `open_file` etc.).

Exit status: 0 clean, 1 banned calls found (each printed as path:line: [rule] ...),
2 usage error. `--self-test` checks the checker on generated good and bad samples.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

SCANNED_DIRS = ("coordinator", "dictionary", "distribution", "fs_client", "local_query",
                "membership", "protocol", "testing", "sim", "runtime")
CPP_EXTENSIONS = (".h", ".hh", ".hpp", ".cc", ".cpp", ".cxx", ".ipp", ".inc")
ALLOWED_FILES = frozenset({
    "runtime/thread_runtime.cc",      # block threads, condition variables, steady clock
    "runtime/thread_layout.cc",       # std::thread::hardware_concurrency
    "runtime/thread_runtime_test.cc",  # real threads, sleeps and deadlines in tests
    "runtime/mpsc_queue_test.cc",     # producer threads for the queue stress tests
})

# (rule, regex, why). The exact list of banned calls.
RULES = [
    ("thread", r"\bstd::j?thread\b", "threads belong to the runtime"),
    ("thread", r"\bstd::async\b", "threads belong to the runtime"),
    ("thread", r"\bpthread_create\s*\(", "threads belong to the runtime"),
    ("sleep", r"\bsleep_for\b", "a block waits with send_delayed, never by sleeping"),
    ("sleep", r"\bsleep_until\b", "a block waits with send_delayed, never by sleeping"),
    ("sleep", r"(?<![\w.>])u?sleep\s*\(", "a block waits with send_delayed, never by sleeping"),
    ("sleep", r"\bnanosleep\s*\(", "a block waits with send_delayed, never by sleeping"),
    ("random", r"(?<![\w.>])s?rand\s*\(", "unseeded randomness: use random()"),
    ("random", r"\brand_r\s*\(", "unseeded randomness: use random()"),
    ("random", r"\brandom_device\b", "unseeded randomness: use random()"),
    ("random", r"\bgetrandom\s*\(", "unseeded randomness: use random()"),
    ("clock", r"\bsystem_clock\b", "wall clock: use clock()"),
    ("clock", r"\bsteady_clock\b", "real clock: use clock()"),
    ("clock", r"\bhigh_resolution_clock\b", "real clock: use clock()"),
    ("clock", r"\btime\s*\(\s*(nullptr|NULL|0)\s*\)", "wall clock: use clock()"),
    ("clock", r"\bgettimeofday\s*\(", "wall clock: use clock()"),
    ("clock", r"\bclock_gettime\s*\(", "real clock: use clock()"),
    ("io", r"(?<![\w.>])socket\s*\(", "network IO belongs to the runtime (transport)"),
    ("io", r"(?<![\w.>])open\s*\(", "file IO belongs to the runtime"),
    ("io", r"(?<![\w.>])fopen\s*\(", "file IO belongs to the runtime"),
    ("io", r"\bstd::[io]?fstream\b", "file IO belongs to the runtime"),
]
COMPILED_RULES = [(rule, re.compile(pattern), why) for rule, pattern, why in RULES]


def is_identifier_char(c):
    return c.isalnum() or c == "_"


def blank_comments_and_literals(text):
    """Replaces comments and string/char literal contents by spaces, keeping newlines
    (so line numbers stay right) and the quotes (so `f("x")` still reads as a call)."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j == -1 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j == -1 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not is_identifier_char(text[i - 1])):
            # Raw string R"delim( ... )delim".
            open_paren = text.find("(", i + 2)
            if open_paren == -1:
                out.append(c)
                i += 1
                continue
            delimiter = text[i + 2:open_paren]
            close = text.find(")" + delimiter + '"', open_paren)
            j = n if close == -1 else close + len(delimiter) + 2
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + '"')
            i = j
        elif c in "\"'":
            # Skip a digit separator such as 1'000'000: a quote right after an
            # alphanumeric character inside a number is not a char literal.
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j, n - 1)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + text[j])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def scan_file(path, display_path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank_comments_and_literals(f.read())
    findings = []
    for line_number, line in enumerate(text.split("\n"), start=1):
        for rule, regex, why in COMPILED_RULES:
            match = regex.search(line)
            if match:
                banned = match.group(0).strip()
                findings.append(f"{display_path}:{line_number}: [{rule}] banned '{banned}': {why}")
    return findings


def scan_root(root, scanned=None):
    """Returns every finding under root's scanned directories, in a stable order.
    Appends the relative path of every file scanned to `scanned` if given."""
    findings = []
    for directory in SCANNED_DIRS:
        base = os.path.join(root, directory)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for filename in sorted(filenames):
                if not filename.endswith(CPP_EXTENSIONS):
                    continue
                path = os.path.join(dirpath, filename)
                relative = os.path.relpath(path, root).replace(os.sep, "/")
                if relative in ALLOWED_FILES:
                    continue
                if scanned is not None:
                    scanned.append(relative)
                findings.extend(scan_file(path, relative))
    return findings


def main_scan(root):
    if not os.path.isdir(root):
        print(f"kernel_tidy: --root {root} is not a directory", file=sys.stderr)
        return 2
    scanned = []
    findings = scan_root(root, scanned)
    for finding in findings:
        print(finding)
    if findings:
        print(f"kernel_tidy: {len(findings)} banned call(s) in {len(scanned)} files; "
              f"see the docstring of {__file__}")
        return 1
    print(f"kernel_tidy: clean ({len(scanned)} files scanned)")
    return 0


# One offending line per banned pattern, each of which must be caught.
BAD_SAMPLES = [
    ("thread", "std::thread worker([] {});"),
    ("thread", "auto f = std::async([] { return 1; });"),
    ("thread", "pthread_create(&t, nullptr, run, nullptr);"),
    ("thread", "std::jthread worker([] {});"),
    ("sleep", "std::this_thread::sleep_for(std::chrono::milliseconds(1));"),
    ("sleep", "std::this_thread::sleep_until(deadline);"),
    ("sleep", "usleep(100);"),
    ("sleep", "sleep(1);"),
    ("sleep", "::sleep(1);"),
    ("sleep", "nanosleep(&ts, nullptr);"),
    ("random", "int r = rand();"),
    ("random", "srand(42);"),
    ("random", "int r = std::rand() % 6;"),
    ("random", "int r = rand_r(&seed);"),
    ("random", "std::random_device device;"),
    ("random", "getrandom(buffer, 16, 0);"),
    ("clock", "auto t = std::chrono::system_clock::now();"),
    ("clock", "auto t = std::chrono::steady_clock::now();"),
    ("clock", "auto t = std::chrono::high_resolution_clock::now();"),
    ("clock", "long t = time(nullptr);"),
    ("clock", "long t = std::time(NULL);"),
    ("clock", "long t = time( 0 );"),
    ("clock", "gettimeofday(&tv, nullptr);"),
    ("clock", "clock_gettime(CLOCK_MONOTONIC, &ts);"),
    ("io", "int fd = socket(AF_INET, SOCK_STREAM, 0);"),
    ("io", "int fd = ::socket(AF_INET, SOCK_STREAM, 0);"),
    ("io", 'int fd = open("/tmp/x", O_RDONLY);'),
    ("io", 'int fd = ::open("/dev/urandom", O_RDONLY);'),
    ("io", 'FILE* f = fopen("x", "r");'),
    ("io", "std::ofstream out(path);"),
    ("io", "std::fstream io(path);"),
]

# Mentions that must NOT be flagged: comments, literals, look-alike identifiers,
# member calls, and the sanctioned interfaces.
CLEAN_SAMPLE = r'''
// Never call std::thread, sleep(1), rand(), steady_clock or open() here.
/* Multi-line comment: usleep(5); system_clock::now();
   socket(AF_INET, SOCK_STREAM, 0); time(nullptr); */
#include <cstdint>
const char* help = "use send_delayed instead of sleep_for(1s) or rand()";
const char* raw = R"doc(steady_clock::now(); fopen("x", "r");)doc";
const char quote = '"';
const char* after_quote = "still a string: srand(1)";
int brand(int x) { return x; }
int operand(int x) { return brand(x); }
void reopen(int) {}
uint64_t timestamp(uint64_t time_ns) { return time_ns; }
struct File;
void use(File& file, File* pointer) {
  file.open(1);
  pointer->open(2);
  reopen(3);
  uint64_t now_ns = clock().now_ns();
  uint64_t draw = random().next_u64();
  int million = 1'000'000;
  (void)now_ns; (void)draw; (void)million;
}
'''


def self_test():
    failures = []

    def check(condition, message):
        if not condition:
            failures.append(message)

    with tempfile.TemporaryDirectory(prefix="kernel_tidy_") as root:
        for directory in SCANNED_DIRS + ("common",):
            os.makedirs(os.path.join(root, directory))

        # A clean tree: banned words only in comments/literals, look-alikes, and the
        # allowed and unscanned places.
        with open(os.path.join(root, "coordinator", "clean.cc"), "w") as f:
            f.write(CLEAN_SAMPLE)
        with open(os.path.join(root, "runtime", "thread_runtime.cc"), "w") as f:
            f.write("std::thread t; auto now = std::chrono::steady_clock::now();\n")
        with open(os.path.join(root, "common", "clock.cc"), "w") as f:
            f.write("auto now = std::chrono::steady_clock::now();\n")
        with open(os.path.join(root, "coordinator", "notes.md"), "w") as f:
            f.write("rand() and std::thread are banned\n")
        findings = scan_root(root)
        check(findings == [], f"clean tree reported findings: {findings}")
        exit_code = subprocess.run([sys.executable, __file__, "--root", root],
                                   capture_output=True).returncode
        check(exit_code == 0, f"clean tree: exit code {exit_code}, expected 0")

        # Each bad line alone must be caught, in every scanned directory.
        for index, (rule, line) in enumerate(BAD_SAMPLES):
            directory = SCANNED_DIRS[index % len(SCANNED_DIRS)]
            path = os.path.join(root, directory, f"bad_{index}.cc")
            with open(path, "w") as f:
                f.write("// a sample with one banned call\nvoid f() {\n  " + line + "\n}\n")
            found = scan_file(path, f"{directory}/bad_{index}.cc")
            check(len(found) >= 1, f"not caught: {line!r}")
            check(all(f":3: [{rule}]" in finding for finding in found),
                  f"wrong rule or line for {line!r}: {found}")
            os.remove(path)

        # A bad file makes the command fail, and the report names file, line and rule.
        with open(os.path.join(root, "sim", "bad.cc"), "w") as f:
            f.write("void f() {\n  int r = rand();\n}\n")
        result = subprocess.run([sys.executable, __file__, "--root", root],
                                capture_output=True, text=True)
        check(result.returncode == 1, f"bad tree: exit code {result.returncode}, expected 1")
        check("sim/bad.cc:2: [random]" in result.stdout, f"bad tree report: {result.stdout!r}")

        # Missing directories scan nothing and pass.
        with tempfile.TemporaryDirectory(prefix="kernel_tidy_empty_") as empty_root:
            check(scan_root(empty_root) == [], "an empty root reported findings")

    if failures:
        for failure in failures:
            print("SELF-TEST FAILED:", failure)
        return 1
    print(f"kernel_tidy self-test: ok ({len(BAD_SAMPLES)} banned patterns caught, "
          "clean sample clean)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--root", help="the ndb-kernel/ directory to scan")
    group.add_argument("--self-test", action="store_true", help="test the checker itself")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    return main_scan(args.root)


if __name__ == "__main__":
    sys.exit(main())
