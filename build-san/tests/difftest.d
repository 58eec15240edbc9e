build-san/tests/difftest: tests/selftests/difftest.c tests/lib/cgfwcmd.h \
 tests/lib/netprobe.h tests/lib/listjson.h tests/lib/classbench.h
tests/lib/cgfwcmd.h:
tests/lib/netprobe.h:
tests/lib/listjson.h:
tests/lib/classbench.h:
