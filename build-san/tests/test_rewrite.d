build-san/tests/test_rewrite: tests/unit/test_rewrite.c \
 build-san/ksft/kselftest_harness.h build-san/ksft/kselftest.h \
 userspace/lib/front/rewrite.h userspace/lib/base/ctx.h \
 userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
 userspace/lib/base/list.h userspace/lib/front/cgroup.h
build-san/ksft/kselftest_harness.h:
build-san/ksft/kselftest.h:
userspace/lib/front/rewrite.h:
userspace/lib/base/ctx.h:
userspace/include/cgfw/cgfw.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
userspace/lib/front/cgroup.h:
