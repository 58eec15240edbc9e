build-san/tests/cgfw_selftest: tests/selftests/cgfw_selftest.c \
 build-san/ksft/kselftest_harness.h build-san/ksft/kselftest.h \
 tests/lib/cgfwcmd.h tests/lib/listjson.h tests/lib/netprobe.h
build-san/ksft/kselftest_harness.h:
build-san/ksft/kselftest.h:
tests/lib/cgfwcmd.h:
tests/lib/listjson.h:
tests/lib/netprobe.h:
