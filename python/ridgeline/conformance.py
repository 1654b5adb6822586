#!/usr/bin/env python3
"""ONNX conformance runner: import -> compile -> run -> compare.

Runs every test of an ONNX backend node-test suite (Debian's libonnx-testdata,
or the newer one inside PyPI's `onnx` wheel: onnx/backend/test/data/node) and
the repository's model fixtures through `ridge-run`, one process per test data
set, and prints one line per test plus a summary:

    PASS: test_add
    FAIL: test_foo: <first error line>
    XFAIL: test_bar: <first error line>        (listed in expected failures)
    XPASS: test_baz                            (listed, but passes now)
    SKIP: test_loop11: out of scope (...)

    N passed, M failed

The exit status is non-zero on any regression: a failure not listed in the
expected-failure file, or a listed test that now passes (remove it from the
list). `--op-table FILE` writes the per-op support table (Markdown).

`--target=sm_80 --device=emulator` runs the GPU build of every test on the
PTX emulator instead of the CPU build (judged against its own expected-failure
list, `--expected-failures`).

Only the Python standard library is needed; model classification (opset, op
types, scope) comes from `ridge-run --describe`.
"""

import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_SUITE = "/usr/share/libonnx-testdata/data/node"
DEFAULT_RTOL = 1e-3  # the ONNX backend tests' own tolerances
DEFAULT_ATOL = 1e-7
MODEL_ATOL = 1e-4  # whole models (issue 3's bar): errors add up across ops
OUT_OF_SCOPE = 4  # ridge-run --describe exit status


class Test:
    def __init__(self, name, model_dir, rtol, atol):
        self.name = name
        self.model_dir = model_dir
        self.rtol = rtol
        self.atol = atol
        self.opset = None
        self.ops = []
        self.scope = None  # None = in scope, else the reason
        self.passed = False
        self.described = False
        self.error = ""
        self.seconds = 0.0


def read_list(path):
    """`name rest...` lines; '#' starts a comment. Returns {name: rest}."""
    entries = collections.OrderedDict()
    if not path or not os.path.exists(path):
        return entries
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, rest = line.partition(" ")
            entries[name] = rest.strip()
    return entries


def read_tolerances(path):
    """`name rtol atol  # why` lines."""
    tolerances = {}
    for name, rest in read_list(path).items():
        fields = rest.split("#", 1)[0].split()
        if len(fields) != 2:
            sys.exit("%s: '%s' needs 'NAME RTOL ATOL'" % (path, name))
        tolerances[name] = (float(fields[0]), float(fields[1]))
    return tolerances


def discover(suite, model_dirs, tolerances, name_filter):
    tests = []

    def add(name, model_dir, default_atol=DEFAULT_ATOL):
        if name_filter and not re.search(name_filter, name):
            return
        rtol, atol = tolerances.get(name, (DEFAULT_RTOL, default_atol))
        tests.append(Test(name, model_dir, rtol, atol))

    if suite:
        for entry in sorted(os.listdir(suite)):
            if os.path.exists(os.path.join(suite, entry, "model.onnx")):
                add(entry, os.path.join(suite, entry))
    for root in model_dirs:
        for entry in sorted(os.listdir(root)):
            model_dir = os.path.join(root, entry)
            # Fixtures without reference data serve other tests (errors).
            if os.path.exists(os.path.join(model_dir, "model.onnx")) and any(
                    d.startswith("test_data_set_") for d in os.listdir(model_dir)):
                add("model_" + entry, model_dir, MODEL_ATOL)
    return tests


def first_error(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for line in lines:
        if "error" in line:
            return line
    return lines[-1] if lines else "no output"


def describe_test(test, ridge_run):
    """Fills in the test's opset, op types and scope; False on an error."""
    if test.described:
        return not test.error
    test.described = True
    model = os.path.join(test.model_dir, "model.onnx")
    describe = subprocess.run([ridge_run, "--describe", model],
                              capture_output=True, text=True)
    for line in describe.stdout.splitlines():
        key, _, value = line.partition(": ")
        if key == "opset":
            test.opset = int(value)
        elif key == "ops":
            test.ops = value.split()
        elif key == "scope" and value != "in":
            test.scope = value[len("out ("):-1] if value.startswith("out (") else value
    if describe.returncode not in (0, OUT_OF_SCOPE):
        test.error = first_error(describe.stderr)
        return False
    return True


def sample_per_op(tests, per_op):
    """The in-scope tests, in name order, that bring some op type (Constant
    aside) to `per_op` tests: every op family covered at most `per_op`
    times over, plus the model fixtures."""
    counts = collections.Counter()
    chosen = []
    for test in sorted(tests, key=lambda t: t.name):
        if test.name.startswith("model_"):
            chosen.append(test)
            continue
        if test.scope is not None or test.error:
            continue
        ops = [op for op in test.ops if op != "Constant"] or test.ops
        if any(counts[op] < per_op for op in ops):
            chosen.append(test)
            counts.update(set(ops))
    return chosen


def run_test(test, ridge_run, timeout, extra_args=()):
    start = time.time()
    model = os.path.join(test.model_dir, "model.onnx")
    if not describe_test(test, ridge_run):
        pass
    elif test.scope is None:
        data_sets = sorted(d for d in os.listdir(test.model_dir)
                           if d.startswith("test_data_set_"))
        if not data_sets:
            test.error = "no test_data_set_* folder"
        test.passed = bool(data_sets)
        for data_set in data_sets:
            cmd = [ridge_run, model, "--test-data",
                   os.path.join(test.model_dir, data_set), "--compare",
                   "--rtol", repr(test.rtol), "--atol", repr(test.atol)]
            cmd += list(extra_args)
            try:
                run = subprocess.run(cmd, capture_output=True, text=True,
                                     timeout=timeout)
            except subprocess.TimeoutExpired:
                test.passed, test.error = False, "timed out after %ds" % timeout
                break
            if run.returncode != 0:
                test.passed = False
                text = run.stderr + run.stdout
                if run.returncode < 0:
                    test.error = "crashed (signal %d): %s" % (-run.returncode,
                                                             first_error(text))
                else:
                    test.error = first_error(text)
                if len(data_sets) > 1:
                    test.error = data_set + ": " + test.error
                break
    test.seconds = time.time() - start
    return test


def shorten(message, limit=160):
    # Paths and locations make reasons unique; keep what was wrong.
    message = re.sub(r"^.*?ridge-run: error: ", "", message)
    message = re.sub(r"/\S*/model\.onnx:\s*", "", message)
    return message if len(message) <= limit else message[:limit - 3] + "..."


def write_op_table(path, tests, suite_label):
    per_op = collections.OrderedDict()
    for test in sorted(tests, key=lambda t: t.name):
        if test.scope is not None or test.name.startswith("model_"):
            continue
        for op in test.ops:
            if op == "Constant" and len(test.ops) > 1:
                continue
            entry = per_op.setdefault(op, {"opsets": set(), "pass": 0,
                                           "fail": 0, "reasons": collections.Counter(),
                                           "failing": []})
            if test.opset is not None:
                entry["opsets"].add(test.opset)
            if test.passed:
                entry["pass"] += 1
            else:
                entry["fail"] += 1
                entry["reasons"][shorten(test.error, 120)] += 1
                entry["failing"].append(test.name)
    in_scope = [t for t in tests if t.scope is None and not t.name.startswith("model_")]
    passed = sum(t.passed for t in in_scope)
    lines = [
        "# ONNX op support",
        "",
        "Generated by `python/ridgeline/conformance.py --op-table` from the",
        "node tests of %s; do not edit by hand." % suite_label,
        "",
        "A test counts for every op in its model (expanded-function tests count",
        "for each op of the expansion). Status: the node tests containing the",
        "op that pass on the CPU path (rtol 1e-3, atol 1e-7 unless",
        "test/conformance/tolerances.txt says otherwise). Like input shapes,",
        "small graph inputs that decide shapes (Reshape targets, Slice bounds,",
        "axes, Resize scales) are specialized to their test-data values",
        "(`ridge-run --specialize-values`, on by default).",
        "",
        "In-scope node tests passing: **%d / %d (%.1f%%)**." % (
            passed, len(in_scope), 100.0 * passed / max(len(in_scope), 1)),
        "",
        "| op | opsets tested | pass | fail | why failing tests fail |",
        "|---|---|---|---|---|",
    ]
    for op in sorted(per_op, key=str.lower):
        e = per_op[op]
        reasons = "; ".join("%s (%d)" % (r.replace("|", "\\|"), c)
                            for r, c in e["reasons"].most_common(2))
        lines.append("| %s | %s | %d | %d | %s |" % (
            op, ", ".join(str(v) for v in sorted(e["opsets"])), e["pass"],
            e["fail"], reasons))
    out_of_scope = collections.Counter(
        t.scope for t in tests if t.scope is not None)
    lines += ["", "## Out of scope", "",
              "| reason | tests |", "|---|---|"]
    for reason, count in sorted(out_of_scope.items()):
        lines.append("| %s | %d |" % (reason.replace("|", "\\|"), count))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default=DEFAULT_SUITE if os.path.isdir(DEFAULT_SUITE) else "",
                        help="node-test folder (default: libonnx-testdata's)")
    parser.add_argument("--models", action="append", default=[],
                        help="folder of model fixtures (<name>/model.onnx + "
                             "test_data_set_*); repeatable")
    parser.add_argument("--bin", default=os.path.join(REPO, "build", "bin"),
                        help="folder holding ridge-run")
    parser.add_argument("--expected-failures", action="append",
                        help="file of tests expected to fail; repeatable: "
                             "the lists add up (a GPU run adds the failures "
                             "of its own to the CPU's list). Default: "
                             "test/conformance/expected-failures.txt")
    parser.add_argument("--tolerances",
                        default=os.path.join(REPO, "test", "conformance",
                                             "tolerances.txt"))
    parser.add_argument("--op-table", help="write the op-support table here")
    parser.add_argument("--update-expected", action="store_true",
                        help="rewrite the expected-failure list from this run")
    parser.add_argument("--filter", help="only tests whose name matches")
    parser.add_argument("--per-op", type=int, metavar="N",
                        help="only a sample of the node tests: in name order, "
                             "each test that brings one of its op types to N "
                             "tests (every op family covered)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds per ridge-run")
    parser.add_argument("--target", default="cpu",
                        help="the code ridge-run builds: cpu (default), "
                             "sm_80, sm_90a, ...")
    parser.add_argument("--device", choices=["gpu", "emulator"],
                        help="where a GPU target's build runs (ridge-run "
                             "--device): the GPU, or the PTX emulator")
    parser.add_argument("--ridge-run-arg", action="append", default=[],
                        help="extra ridge-run argument, e.g. "
                             "--ridge-run-arg=--specialize-values=false")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only failures, regressions and the summary")
    parser.add_argument("--label", default="",
                        help="prefix of the summary lines (a second suite's "
                             "name, e.g. 'onnx 1.23.0 node suite')")
    args = parser.parse_args(argv)

    if args.update_expected and (args.per_op or args.filter):
        sys.exit("conformance: --update-expected needs the whole suite "
                 "(no --filter, no --per-op)")
    if args.device and args.target == "cpu":
        sys.exit("conformance: --device needs a GPU --target (sm_80, sm_90a)")
    run_args = list(args.ridge_run_arg)
    if args.target != "cpu":
        run_args.append("--target=" + args.target)
    if args.device:
        run_args.append("--device=" + args.device)
    ridge_run = os.path.join(args.bin, "ridge-run")
    if not os.access(ridge_run, os.X_OK):
        sys.exit("conformance: %s not found; build first" % ridge_run)
    if not args.suite and not args.models:
        sys.exit("conformance: no node-test suite found and no --models given")
    if not args.expected_failures:
        args.expected_failures = [os.path.join(REPO, "test", "conformance",
                                               "expected-failures.txt")]
    expected = collections.OrderedDict()
    for path in args.expected_failures:
        expected.update(read_list(path))
    # --update-expected rewrites the last list with what the others do not
    # already expect.
    inherited = collections.OrderedDict()
    for path in args.expected_failures[:-1]:
        inherited.update(read_list(path))
    tests = discover(args.suite, args.models, read_tolerances(args.tolerances),
                     args.filter)
    start = time.time()
    if args.per_op:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(lambda t: describe_test(t, ridge_run), tests))
        tests = sample_per_op(tests, args.per_op)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_test, t, ridge_run, args.timeout,
                               run_args)
                   for t in tests]
        for future in futures:
            future.result()

    counts = collections.Counter()
    for test in tests:
        if test.scope is not None:
            status, detail = "SKIP", "out of scope (%s)" % test.scope
        elif test.passed:
            status, detail = ("XPASS", "listed as an expected failure, remove it") \
                if test.name in expected else ("PASS", "")
        else:
            status = "XFAIL" if test.name in expected else "FAIL"
            detail = shorten(test.error)
        counts[status] += 1
        if not args.quiet or status in ("FAIL", "XPASS"):
            print("%s: %s%s" % (status, test.name, ": " + detail if detail else ""))
    stale = [name for name in expected
             if name not in {t.name for t in tests}]
    if args.filter or args.per_op or not args.suite:
        stale = []

    in_scope = len(tests) - counts["SKIP"]
    passed = counts["PASS"] + counts["XPASS"]
    failed = counts["FAIL"] + counts["XFAIL"]
    prefix = args.label + ": " if args.label else ""
    print()
    print("%s%d tests, %d in scope, %d out of scope; %.0f s" % (
        prefix, len(tests), in_scope, counts["SKIP"], time.time() - start))
    print("%sin-scope pass rate: %d / %d (%.1f%%); expected failures %d, "
          "new failures %d, newly passing %d" % (
              prefix, passed, in_scope, 100.0 * passed / max(in_scope, 1),
              counts["XFAIL"], counts["FAIL"], counts["XPASS"]))
    for name in stale:
        print("note: expected failure '%s' names no test" % name)
    print("%s%d passed, %d failed" % (prefix, passed, failed))

    if args.op_table:
        label = args.suite or "the model fixtures"
        write_op_table(args.op_table, tests, label)
    if args.update_expected:
        with open(args.expected_failures[-1], "w") as f:
            f.write("# In-scope conformance tests that fail today, with the first\n"
                    "# error line. The runner fails on a failure not listed here and\n"
                    "# on a listed test that passes. Regenerate with --update-expected.\n")
            for test in sorted(tests, key=lambda t: t.name):
                if test.scope is None and not test.passed and \
                        test.name not in inherited:
                    f.write("%s  # %s\n" % (test.name, shorten(test.error, 200)))
    regressions = counts["FAIL"] + counts["XPASS"]
    return 1 if regressions and not args.update_expected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
