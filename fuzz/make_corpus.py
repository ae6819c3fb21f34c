#!/usr/bin/env python3
"""Writes the checked-in seed corpora under fuzz/corpus/<target>/ from the
project's own sample files plus the known hard cases of issue 10. Re-run it
after adding a case; the files it writes are small on purpose (the 100 MB
case is a unit test, tests/core/file_size_cap_test.cpp, not a seed)."""
import gzip
import os
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "corpus"
DEPTH = 5000  # far past every depth limit (TOML 32, JSON 64, formula 64)

TOML_HARD = {
    "nul_in_header": b"[top\x00ology]\nx = 1\n",
    "nul_in_array_header": b"[[no\x00de]]\nname = \"a\"\n",
    "deep_arrays": b"a = " + b"[" * DEPTH + b"]" * DEPTH + b"\n",
    "deep_inline_tables": b"a = " + b"{b = " * DEPTH + b"1" + b"}" * DEPTH + b"\n",
    "deep_dotted_keys": b"a" + b".a" * DEPTH + b" = 1\n",
    "deep_dotted_header": b"[a" + b".a" * DEPTH + b"]\n",
    "unclosed_deep_arrays": b"a = " + b"[" * DEPTH,
    "invalid_utf8": b"name = \"\xff\xfe\xc3\x28\xed\xa0\x80\"\n",
    "invalid_utf8_key": b"\xc3\x28 = 1\n",
    "string_starting_newline": b"name = \"\\nstarts with a newline\"\n",
    "multiline_starting_newline": b"name = \"\"\"\n\nsecond line\"\"\"\n",
    "escapes": b"s = \"\\u0000\\t\\\"\\\\\\u00e9\\U0001F600\"\n",
    "crlf": b"a = 1\r\nb = \"x\"\r\n",
    "big_int": b"n = 9223372036854775808\nm = -9223372036854775809\n",
    "floats": b"f = [1e400, -0.0, 1.5e-320, nan, inf, -inf]\n",
}

JSON_HARD = {
    "deep_arrays": b"[" * DEPTH + b"]" * DEPTH,
    "deep_objects": b"{\"a\":" * DEPTH + b"1" + b"}" * DEPTH,
    "invalid_utf8": b"{\"k\": \"\xff\xfe\"}",
    "nul": b"{\"k\": \"a\x00b\"}",
    "escapes": b"[\"\\u0000\", \"\\ud800\", \"\\udc00\\ud800\", \"\\n\"]",
    "numbers": b"[1e400, -1e-400, 0.0000001, -0, 123456789012345678901234567890]",
}


def write(target, name, data):
    folder = OUT / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def copy_files(target, paths):
    for path in paths:
        rel = path.relative_to(ROOT)
        write(target, "sample_" + str(rel).replace("/", "_"), path.read_bytes())


def main():
    for target in ["toml", "topology", "lab", "progress", "answers"]:
        for name, data in TOML_HARD.items():
            write("fuzz_" + target, name, data)
    copy_files("fuzz_topology", sorted((ROOT / "assets/topologies").glob("*.toml")))
    copy_files("fuzz_topology", sorted((ROOT / "tests/data/topology").glob("*.toml")))
    copy_files("fuzz_lab", sorted((ROOT / "labs").glob("*/lab.toml")))
    copy_files("fuzz_answers", sorted((ROOT / "tests/data/labs").glob("*.toml")))
    copy_files("fuzz_toml", sorted((ROOT / "assets/topologies").glob("*.toml")))
    write("fuzz_progress", "sample",
          b"lab = \"01-ring-allreduce\"\nstep = 2\ncompleted = [\"predict\", \"run\"]\n\n"
          b"[[answer]]\nquestion = \"q1\"\nvalue = \"\\n3.5\"\nchecked = true\n"
          b"verdict = \"correct\"\nexpected = \"3.5 ms\"\nfeedback = \"ok\"\n")
    for name, data in JSON_HARD.items():
        write("fuzz_json", name, data)
        write("fuzz_trace", name, data)
    trace = (b"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"send\", \"cat\": \"op\", \"pid\": 2,"
             b" \"tid\": 1000011, \"ts\": 1.5, \"dur\": 2, \"args\": {\"bytes\": 64, \"step\": 0,"
             b" \"seq\": 0, \"op\": 9, \"peer\": 0, \"clock\": \"cuda-event\"}}],"
             b" \"otherData\": {\"plan\": \"p\", \"topology\": \"dgx-a100\", \"ranks\": 2,"
             b" \"steps\": 1, \"backend\": \"cuda\"}}")
    write("fuzz_trace", "sample", trace)
    write("fuzz_json", "sample", trace)
    for i, text in enumerate([b"64MiB", b"1.5 GB", b"0", b"9223372036854775807", b"1e30 KiB",
                              b"-1", b"18446744073709551616B", b"8 EiB", b"nan MB", b"0x10"]):
        write("fuzz_size", "s%d" % i, text)
    for i, words in enumerate([[b"allreduce", b"--ranks", b"8", b"-b", b"64MiB", b"--check"],
                               [b"-n8", b"--size=1GiB", b"-qb", b"1", b"--", b"--ranks"],
                               [b"--ranks", b"--size", b"-", b"--trace="], [b"--\xff", b"\xc3("]]):
        write("fuzz_args", "a%d" % i, b"\x00".join(words))
    for i, text in enumerate([b"2 * (n - 1) / n * size / bw", b"max(a, b) + min(1, -c) ^ 2",
                              b"(" * DEPTH + b"1" + b")" * DEPTH, b"-" * DEPTH + b"1",
                              b"1 / 0", b"x ^ 1e308", b"sqrt(-1)", b"log2(0)", b"1e400 - 1e400"]):
        write("fuzz_formula", "f%d" % i, text)
    # The field readers (shardlab-cli inspect): the real files of
    # tests/data/real/, each target seeded with its kind's files (and the
    # others, which it must refuse cleanly), plus deep nesting and gzip.
    real = sorted((ROOT / "tests/data/real").glob("*"))
    real = [p for p in real if p.name != "README.md"]
    for target in ["nccl_topology", "nccl_graph", "smi_topology", "nccl_log", "nccl_tests"]:
        copy_files("fuzz_" + target, real)
    write("fuzz_nccl_topology", "deep_pci",
          b"<system version=\"1\"><cpu numaid=\"0\">" + b"<pci>" * DEPTH + b"</pci>" * DEPTH + b"</cpu></system>")
    write("fuzz_nccl_graph", "deep_gpu", b"<graphs><graph id=\"0\"><channel>" + b"<gpu dev=\"0\">" * DEPTH)
    write("fuzz_nccl_topology", "gzip_ndv2", gzip.compress((ROOT / "tests/data/real/azure-ndv2-topo.xml").read_bytes()))
    write("fuzz_nccl_log", "gzip_truncated",
          gzip.compress((ROOT / "tests/data/real/nccl-issue428-2xT4-channels.log").read_bytes())[:200])
    # Worker stream seeds: a few well-formed and truncated headers; libFuzzer
    # finds the real framing from the decoder's comparisons.
    for i, data in enumerate([b"\x07", b"\x01" + bytes(12), b"\x40" + b"\xff" * 40]):
        write("fuzz_worker_protocol", "w%d" % i, data)


if __name__ == "__main__":
    main()
