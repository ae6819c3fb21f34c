#!/usr/bin/env python3
"""The timing goals of the CUDA backend, read from a scripts/gpu-check.sh folder.

    python3 scripts/gpu_goals.py FOLDER

Prints one PASS/FAIL line per goal with the figure behind it, and exits 1
when any goal fails or its figure is missing:

  event overhead   < 5% from 1 MiB chunks (event_overhead.txt, the benchmark)
  ring roofline    8 virtual ranks, 64 MiB: >= 80% of the copy roofline, where the
                   roofline is the HBM traffic of the plan's transfers (a reducing
                   receive reads two buffers and writes one, a copy reads one and
                   writes one) over the copy traffic rate calibrate measured
  ring latency     8 virtual ranks, 8 B: < 60 us
  no outlier       in every trace, every op within 2x the median of ops like it
                   (same kind and bytes, same name up to its numbers; groups of 3 or more)
  emulated ring    dgx-a100, 8 ranks, 16 MiB: within 10% of the simulator
  model of this machine (issue 24), one line per case: model / measured within
                   0.85-1.15, read from the "# total:" line of the --compare sim
                   table in model-CASE.txt (ring 8 ranks 16M, 64M, 256M, 1G, the
                   1F1B step, the TP MLP layer, a ZeRO-3 step)
"""
import glob
import json
import os
import re
import statistics
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}

# The cases of the model goal: (file in the folder, what it measured).
MODEL_CASES = [
    ("model-ring8-16M.txt", "ring all-reduce, 8 virtual ranks, 16 MiB"),
    ("model-ring8-64M.txt", "ring all-reduce, 8 virtual ranks, 64 MiB"),
    ("model-ring8-256M.txt", "ring all-reduce, 8 virtual ranks, 256 MiB"),
    ("model-ring8-1G.txt", "ring all-reduce, 8 virtual ranks, 1 GiB"),
    ("model-pipeline-1f1b.txt", "1F1B step, 4 stages, 8 micro-batches"),
    ("model-tp-mlp.txt", "TP MLP layer, tp 4"),
    ("model-zero3.txt", "ZeRO-3 step, 4 ranks"),
]
MODEL_BAND = (0.85, 1.15)


def model_over_measured(path):
    """(model / measured, model us, measured us) from a --compare sim table:
    the last "# total: A .. us, B .. us, B/A .." line, its sides named by the
    "#   A = ..., B = ..." line above it (the simulated side is the model)."""
    sides, total = None, None
    with open(path) as f:
        for line in f:
            m = re.match(r"#   A = (.*), B = (.*); \d+ ops matched by id", line)
            if m:
                sides = (m.group(1), m.group(2))
            m = re.match(r"# total: A ([\d.]+) us, B ([\d.]+) us, B/A ([\d.]+)", line)
            if m:
                total = (sides, float(m.group(1)), float(m.group(2)), float(m.group(3)))
    if total is None or total[0] is None:
        raise ValueError("no compare table (no '# total:' line after an 'A = ..., B = ...' line)")
    (a_label, b_label), a_us, b_us, b_over_a = total
    a_sim, b_sim = "simulated" in a_label, "simulated" in b_label
    if a_sim == b_sim:
        raise ValueError("not one measured and one simulated side (A = %s, B = %s)" % (a_label, b_label))
    if b_sim:
        return b_over_a, b_us, a_us
    if b_over_a <= 0:
        raise ValueError("B/A is %g" % b_over_a)
    return 1.0 / b_over_a, a_us, b_us


def main(folder):
    failed = []

    def goal(name, ok, detail):
        print("%s  %s: %s" % ("PASS" if ok else "FAIL", name, detail))
        if not ok:
            failed.append(name)

    def load_json(name):
        with open(os.path.join(folder, name)) as f:
            return json.load(f)

    def slices(trace_path):
        with open(trace_path) as f:
            events = json.load(f)["traceEvents"]
        return [e for e in events if e.get("ph") == "X" and e.get("cat") != "host"]

    gpu = "unknown GPU"
    try:
        with open(os.path.join(folder, "device.toml")) as f:
            m = re.search(r'^model\s*=\s*"([^"]*)"', f.read(), re.M)
            gpu = m.group(1) if m else gpu
    except OSError:
        pass
    print("# goals on %s" % gpu)

    # Event overhead.
    try:
        worst = None
        with open(os.path.join(folder, "event_overhead.txt")) as f:
            for line in f:
                m = re.match(r"\s*([\d.]+) (B|KiB|MiB|GiB)\s+([\d.]+)\s+([\d.]+)\s+(-?[\d.]+)%", line)
                if m and float(m.group(1)) * UNITS[m.group(2)] >= (1 << 20):
                    worst = max(worst if worst is not None else -1e9, float(m.group(5)))
        if worst is None:
            goal("event overhead < 5% from 1 MiB", False, "no rows in event_overhead.txt")
        else:
            goal("event overhead < 5% from 1 MiB", worst < 5.0, "worst %.1f%%" % worst)
    except OSError as e:
        goal("event overhead < 5% from 1 MiB", False, str(e))

    # Ring roofline at 64 MiB and latency at 8 B.
    try:
        with open(os.path.join(folder, "device.toml")) as f:
            m = re.search(r"^d2d_copy_gbps\s*=\s*([\d.eE+-]+)", f.read(), re.M)
        copy_traffic_gbps = 2 * float(m.group(1))
        traffic = 0
        for e in slices(os.path.join(folder, "traces", "ring8-64M.json")):
            args = e.get("args", {})
            if args.get("kind") == "recv":
                traffic += args.get("bytes", 0) * (3 if "reduce" in args else 2)
        roofline_us = traffic / copy_traffic_gbps / 1e3
        time_us = load_json("ring8-64M.json")["time_us"]
        goal("ring 8 ranks 64 MiB >= 80% of the copy roofline", roofline_us / time_us >= 0.8,
             "%.1f us against a roofline of %.1f us (%.0f%%; %.0f MB of HBM traffic at %.0f GB/s)"
             % (time_us, roofline_us, 100 * roofline_us / time_us, traffic / 1e6, copy_traffic_gbps))
    except (OSError, KeyError, AttributeError, ValueError, ZeroDivisionError) as e:
        goal("ring 8 ranks 64 MiB >= 80% of the copy roofline", False, "missing figure: %r" % e)
    try:
        time_us = load_json("ring8-8B.json")["time_us"]
        goal("ring 8 ranks 8 B < 60 us", time_us < 60, "%.1f us" % time_us)
    except (OSError, KeyError, ValueError) as e:
        goal("ring 8 ranks 8 B < 60 us", False, "missing figure: %r" % e)

    # No op beyond 2x the median of ops like it, in every scenario's trace.
    traces = sorted(glob.glob(os.path.join(folder, "traces", "*.json")))
    if not traces:
        goal("no op beyond 2x its kind's median", False, "no traces")
    for path in traces:
        name = os.path.basename(path)
        if "no-graph" in name:
            continue
        try:
            groups = {}
            for e in slices(path):
                args = e.get("args", {})
                if args.get("kind") == "send":
                    continue  # a send's slice repeats its recv's times
                # Ops like it: same kind and bytes, and the same name up to its
                # numbers ("recv+ c3 <-2" and "recv+ c5 <-4"; "forward L1", "forward L6").
                key = (args.get("kind"), re.sub(r"\d+", "#", e.get("name", "")), args.get("bytes"))
                groups.setdefault(key, []).append(e["dur"])
            worst = (0.0, None)
            for key, durs in groups.items():
                if len(durs) < 3:
                    continue
                median = statistics.median(durs)
                if median <= 0:
                    continue
                ratio = max(durs) / median
                if ratio > worst[0]:
                    worst = (ratio, "%s '%s' %s B: %.1f us, median %.1f us" % (key[0], key[1], key[2],
                                                                           max(durs), median))
            goal("no op beyond 2x its kind's median (%s)" % name, worst[0] <= 2.0,
                 "worst %.2fx (%s)" % worst if worst[1] else "no group of 3 or more")
        except (OSError, ValueError, KeyError) as e:
            goal("no op beyond 2x its kind's median (%s)" % name, False, repr(e))

    # Emulated ring against the simulator.
    try:
        emu = load_json("emulated-ring8-16M.json")["time_us"]
        sim = load_json("sim-ring8-16M.json")["time_us"]
        goal("emulated ring dgx-a100 8 ranks 16 MiB within 10% of the simulator",
             abs(emu - sim) <= 0.1 * sim, "%.1f us emulated, %.1f us simulated (%+.0f%%)"
             % (emu, sim, 100 * (emu - sim) / sim))
    except (OSError, KeyError, ValueError, ZeroDivisionError) as e:
        goal("emulated ring dgx-a100 8 ranks 16 MiB within 10% of the simulator", False,
             "missing figure: %r" % e)

    # 16-bit on the GPU: checked with the dtype's bound, half the fp32 bytes
    # on the wire (the trace's receives), and the time beside fp32's.
    for dtype in ("fp16", "bf16"):
        try:
            run = load_json("ring8-64M-%s.json" % dtype)
            goal("ring 8 ranks 64 MiB in %s is correct within its bound" % dtype,
                 run.get("checked") is True and run.get("correct") is True,
                 "checked %s, %s wrong; %.1f us against fp32's %.1f us"
                 % (run.get("checked"), run.get("wrong"), run["time_us"], load_json("ring8-64M.json")["time_us"]))
        except (OSError, KeyError, ValueError) as e:
            goal("ring 8 ranks 64 MiB in %s is correct within its bound" % dtype, False, "missing figure: %r" % e)
    # --size is bytes: fp16's 64 MiB is twice fp32's elements in the same
    # bytes. Holding them as float32 on the GPU (before 16-bit buffers) moved
    # twice the bytes and took about twice as long.
    try:
        half, full = load_json("ring8-64M-fp16.json")["time_us"], load_json("ring8-64M.json")["time_us"]
        goal("fp16 ring 64 MiB within 1.5x of the fp32 ring's time (the same bytes moved)",
             half <= 1.5 * full, "%.1f us against %.1f us (%.2fx)" % (half, full, half / full))
    except (OSError, KeyError, ValueError, ZeroDivisionError) as e:
        goal("fp16 ring 64 MiB within 1.5x of the fp32 ring's time (the same bytes moved)", False,
             "missing figure: %r" % e)

    # The model of this machine against the measurement, one line per case.
    low, high = MODEL_BAND
    for filename, what in MODEL_CASES:
        name = "model within 15%%: %s" % what
        try:
            ratio, model_us, measured_us = model_over_measured(os.path.join(folder, filename))
            goal(name, low <= ratio <= high,
                 "model / measured = %.3f (goal within %.2f\u2013%.2f; model %.1f us, measured %.1f us)"
                 % (ratio, low, high, model_us, measured_us))
        except (OSError, ValueError) as e:
            goal(name, False, "missing figure: %s (%s)" % (e, filename))

    print("# %d goal(s) failed" % len(failed) if failed else "# every goal passed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: gpu_goals.py FOLDER (a scripts/gpu-check.sh output folder)\n")
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
