#!/usr/bin/env python3
"""Achieved memory bandwidth of the element-wise kernels in a profiled step.

Reads a Chrome trace written by profile_shapes.py (gzipped or not), joins
each GPU kernel to the ATen operator that launched it (the trace's
"External id") and, for the element-wise operators whose traffic follows
from their inputs' shapes and datatypes (copy_, mul, add, add_, silu,
silu_backward, pow, div), counts the bytes each kernel reads and writes:
every input once and an output of the largest input's size in the result's
datatype (copy_: the source read, the destination written). Prints, per
operator and datatypes, the kernels, their time, the bytes and bytes / time,
over tensors of at least 1 M elements. Then, per ATen kernel template
(vectorized_elementwise_kernel: contiguous operands of one datatype;
unrolled_elementwise_kernel: a dtype-converting copy; elementwise_kernel:
broadcast or strided operands), the same over activation- and weight-sized
tensors (1 M to 100 M elements: the logits are left out) with the elements
processed per second, the largest tensor's element count over the kernel's
time.

usage: trace_bandwidth.py TRACE.json[.gz] [PEAK_TB_S]
"""

import collections
import gzip
import json
import math
import sys

SIZES = {"c10::BFloat16": 2, "c10::Half": 2, "float": 4, "c10::complex<float>": 8, "double": 8, "long int": 8}
OPS = {"aten::copy_", "aten::mul", "aten::add", "aten::add_", "aten::silu", "aten::silu_backward", "aten::pow",
       "aten::div"}


def main():
    path = sys.argv[1]
    peak = float(sys.argv[2]) if len(sys.argv) > 2 else 4.8
    doc = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    ops = {e["args"]["External id"]: e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"}
    agg = collections.defaultdict(lambda: [0.0, 0.0, 0])
    paths = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for k in events:
        if k.get("ph") != "X" or k.get("cat") != "kernel":
            continue
        op = ops.get(k["args"].get("External id"))
        if op is None or op["name"] not in OPS:
            continue
        dims, types = op["args"].get("Input Dims", []), op["args"].get("Input type", [])
        tensors = [(math.prod(d) if d else 1, SIZES[t]) for d, t in zip(dims, types) if t in SIZES and d]
        if not tensors:
            continue
        n = max(m for m, _ in tensors)
        if n < 1e6:
            continue
        if op["name"] == "aten::copy_":
            nbytes = sum(m * s for m, s in tensors[:2])
            kinds = "%s <- %s" % tuple(t.replace("c10::", "") for t in types[:2])
        else:
            out = max(s for m, s in tensors if m == n)
            nbytes = sum(m * s for m, s in tensors) + n * out
            kinds = "/".join(t.replace("c10::", "") for t in types if t in SIZES)
        if n <= 1e8:
            p = paths[k["name"].split("<")[0].split("::")[-1]]
            p[0] += nbytes
            p[1] += k["dur"] * 1e-6
            p[2] += n
            p[3] += 1
        a = agg[(op["name"], kinds)]
        a[0] += nbytes
        a[1] += k["dur"] * 1e-6
        a[2] += 1
    print("%-16s %-26s %7s %9s %9s %9s" % ("operator", "datatypes", "kernels", "ms", "GB", "TB/s"))
    for (name, kinds), (nbytes, sec, count) in sorted(agg.items(), key=lambda x: -x[1][1]):
        print("%-16s %-26s %7d %9.2f %9.2f %6.2f (%.0f %% of %.1f)" %
              (name, kinds[:26], count, sec * 1e3, nbytes / 1e9, nbytes / sec / 1e12, 100 * nbytes / sec / 1e12 / peak,
               peak))

    print()
    print("%-32s %7s %9s %9s %9s" % ("kernel (1 M to 100 M elements)", "kernels", "ms", "TB/s", "Gelem/s"))
    for name, (nbytes, sec, elements, count) in sorted(paths.items(), key=lambda x: -x[1][1]):
        print("%-32s %7d %9.2f %9.2f %9.1f" % (name, count, sec * 1e3, nbytes / sec / 1e12, elements / sec / 1e9))
    slow = [v for name, v in paths.items() if name != "vectorized_elementwise_kernel"]
    if slow:
        elements, sec = sum(v[2] for v in slow), sum(v[1] for v in slow)
        print("non-vectorized together: %.1f Gelem/s over %.2f ms" % (elements / sec / 1e9, sec * 1e3))


if __name__ == "__main__":
    main()
