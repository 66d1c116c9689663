#!/usr/bin/env python3
"""Baseline of `pincer-bench --only l10n`: pseudol10nutil (PyPI, by L. Saguisag).

    python3 scripts/bench-l10n-baseline.py STRINGS.json [--rounds N]

STRINGS.json is one JSON array of strings (pincer-bench writes it, the same
strings as its .po catalog). Applies PseudoL10nUtil().pseudolocalize to every
string -- its default transforms, i.e. all of them: diacritics, padding to
IBM's expansion table, and brackets -- after an untimed warm-up pass over
the first 10,000 strings, and times only the transform loop with
time.perf_counter, best of N rounds.

Prints one JSON object on stdout: count, rounds, best_seconds, seconds (each
round), unchanged (results equal to their input: should be 0), the output's
total length in characters, and the python and pseudol10nutil versions.
When pseudol10nutil cannot be imported it prints {"error": ...} and exits 3.

Install the baseline with:  pip install --pre pseudol10nutil
(the latest release, 0.1.dev5, is a pre-release; it depends on six).
"""
import json
import sys
import time

INSTALL = "pip install --pre pseudol10nutil"


def fail(message, status):
    print(json.dumps({"error": message}))
    sys.exit(status)


def main(argv):
    if len(argv) < 1:
        fail("usage: bench-l10n-baseline.py STRINGS.json [--rounds N]", 2)
    path = argv[0]
    rounds = 5
    rest = argv[1:]
    while rest:
        flag = rest.pop(0)
        if flag == "--rounds" and rest:
            try:
                rounds = max(1, int(rest.pop(0)))
            except ValueError:
                fail("--rounds expects a positive integer", 2)
        else:
            fail("unexpected argument %r" % flag, 2)

    try:
        from pseudol10nutil import PseudoL10nUtil
    except ImportError as error:
        fail("cannot import pseudol10nutil (%s) with %s; install it with: %s"
             % (error, sys.executable, INSTALL), 3)
    try:
        from importlib.metadata import version
        util_version = version("pseudol10nutil")
    except Exception:  # noqa: BLE001 -- the version is information only
        util_version = "unknown"

    with open(path, encoding="utf-8") as f:
        strings = json.load(f)
    if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
        fail("%s is not a JSON array of strings" % path, 2)

    util = PseudoL10nUtil()
    pseudolocalize = util.pseudolocalize
    count = len(strings)
    out = [None] * count

    def one_round(n):
        unchanged = 0
        start = time.perf_counter()
        for i in range(n):
            s = strings[i]
            r = pseudolocalize(s)
            if r == s:
                unchanged += 1
            out[i] = r
        return time.perf_counter() - start, unchanged

    one_round(min(count, 10000))  # warm-up: regex cache, allocator, bytecode caches
    seconds = []
    unchanged = 0
    for _ in range(rounds):
        elapsed, unchanged = one_round(count)
        seconds.append(elapsed)

    print(json.dumps({
        "count": count,
        "rounds": rounds,
        "best_seconds": min(seconds),
        "seconds": seconds,
        "unchanged": unchanged,
        "output_characters": sum(len(r) for r in out),
        "python": "%d.%d.%d" % sys.version_info[:3],
        "pseudol10nutil": util_version,
    }))


if __name__ == "__main__":
    main(sys.argv[1:])
