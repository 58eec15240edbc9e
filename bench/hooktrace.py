# gdb script (bench/hooktrace.sh): stop at the first call of HOOKTRACE_FN,
# single-step it to its return, and print how many instructions ran in
# each function, in the order first met, then the total, and how many of
# them were iterations of "rep stos" (the zeroing of locals that
# CONFIG_INIT_STACK_ALL_ZERO adds, in these functions).
import collections
import os

import gdb

fn = os.environ["HOOKTRACE_FN"]
gdb.execute("set pagination off")
gdb.execute("target remote 127.0.0.1:1234")
gdb.execute("hbreak " + fn)
gdb.execute("continue")
gdb.execute("delete")
sp0 = int(gdb.parse_and_eval("$rsp"))
count = collections.Counter()
zeroing = 0
inf = gdb.selected_inferior()
for _ in range(100000):
    pc = int(gdb.parse_and_eval("$pc"))
    if bytes(inf.read_memory(pc, 3)) == b"\xf3\x48\xab":	# rep stos %rax
        zeroing += 1
    where = gdb.execute("info symbol %d" % pc, to_string=True)
    name = where.split(" in section")[0].split(" + ")[0].strip()
    if name.startswith("No symbol"):
        name = "(BPF program)"
    count[name] += 1
    gdb.execute("stepi", to_string=True)
    if int(gdb.parse_and_eval("$rsp")) > sp0:	# returned
        break
for name, n in count.items():
    print("hooktrace: %5d %s" % (n, name))
print("hooktrace: %5d total, %d of them rep stos" % (sum(count.values()),
                                                   zeroing))
gdb.execute("detach")
