#!/usr/bin/env python3
"""What a page fault costs on this machine: touches 2 GiB of fresh anonymous memory (one write per 4 KiB
page) three times: at once, again at once, and again after 5 s idle, when a hypervisor that takes freed
memory back (virtio-balloon free page reporting) has had time to. Prints seconds per pass. Used for
docs/BENCHMARKS.md, "This machine"."""
import mmap, time, sys
n = 2 << 30
def touch():
    m = mmap.mmap(-1, n)
    t = time.perf_counter()
    for i in range(0, n, 4096): m[i] = 1
    d = time.perf_counter() - t
    m.close()
    return d
print("first %.3f s" % touch())
print("again at once %.3f s" % touch())
time.sleep(5)
print("again after 5 s %.3f s" % touch())
