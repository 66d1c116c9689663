#!/usr/bin/env python3
"""Baseline of `pincer-bench --only loc`: gpxpy (PyPI, by T. Krajina).

    python3 scripts/bench-loc-baseline.py FILE.gpx [--rounds N]

Reads FILE.gpx (pincer-bench writes it: the same file it parses itself)
into memory once, as text, then times gpxpy.parse(text) alone with
time.perf_counter, N rounds (default 3), and reports their median: the
statistic pincer-bench takes of its own N rounds, so that neither side is
a best case against the other's typical one.

Prints one JSON object on stdout: bytes (of the file), rounds,
median_seconds, seconds (each round), tracks, segments, points (track
points), points_per_track, points_with_time, points_with_elevation,
waypoints, routes, and the python and gpxpy versions.
When gpxpy cannot be imported it prints {"error": ...} and exits 3.

Install the baseline with:  pip install gpxpy
"""
import json
import os
import statistics
import sys
import time

INSTALL = "pip install gpxpy"


def fail(message, status):
    print(json.dumps({"error": message}))
    sys.exit(status)


def main(argv):
    if len(argv) < 1:
        fail("usage: bench-loc-baseline.py FILE.gpx [--rounds N]", 2)
    path = argv[0]
    rounds = 3
    rest = argv[1:]
    while rest:
        flag = rest.pop(0)
        try:
            if flag == "--rounds" and rest:
                rounds = max(1, int(rest.pop(0)))
            else:
                fail("unexpected argument %r" % flag, 2)
        except ValueError:
            fail("%s expects a number" % flag, 2)

    try:
        import gpxpy
    except ImportError as error:
        fail("cannot import gpxpy (%s) with %s; install it with: %s"
             % (error, sys.executable, INSTALL), 3)
    gpxpy_version = getattr(gpxpy, "__version__", None)
    if not gpxpy_version:
        try:
            from importlib.metadata import version
            gpxpy_version = version("gpxpy")
        except Exception:  # noqa: BLE001 -- the version is information only
            gpxpy_version = "unknown"

    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8")

    seconds = []
    gpx = None
    while len(seconds) < rounds:
        gpx = None  # free the previous round's objects outside the timed part
        start = time.perf_counter()
        gpx = gpxpy.parse(text)
        seconds.append(time.perf_counter() - start)

    points_per_track = []
    segments = 0
    with_time = 0
    with_elevation = 0
    for track in gpx.tracks:
        n = 0
        for segment in track.segments:
            if not segment.points:
                continue
            segments += 1
            n += len(segment.points)
            for p in segment.points:
                if p.time is not None:
                    with_time += 1
                if p.elevation is not None:
                    with_elevation += 1
        points_per_track.append(n)

    print(json.dumps({
        "bytes": len(data),
        "rounds": len(seconds),
        "median_seconds": statistics.median(seconds),
        "seconds": seconds,
        "tracks": len(gpx.tracks),
        "segments": segments,
        "points": sum(points_per_track),
        "points_per_track": points_per_track,
        "points_with_time": with_time,
        "points_with_elevation": with_elevation,
        "waypoints": len(gpx.waypoints),
        "routes": len(gpx.routes),
        "python": "%d.%d.%d" % sys.version_info[:3],
        "gpxpy": gpxpy_version,
    }))
    # Skip tearing down gpxpy's objects (a second or more for a large file):
    # the figures are out.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
