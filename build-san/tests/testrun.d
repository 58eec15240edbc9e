build-san/tests/testrun: tests/selftests/testrun.c \
 build-san/ksft/kselftest_harness.h build-san/ksft/kselftest.h \
 tests/lib/cgfwcmd.h tests/lib/bpfprog.h tests/lib/netprobe.h
build-san/ksft/kselftest_harness.h:
build-san/ksft/kselftest.h:
tests/lib/cgfwcmd.h:
tests/lib/bpfprog.h:
tests/lib/netprobe.h:
