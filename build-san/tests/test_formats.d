build-san/tests/test_formats: tests/unit/test_formats.c \
 build-san/ksft/kselftest_harness.h build-san/ksft/kselftest.h \
 userspace/lib/base/json.h userspace/lib/base/strbuf.h \
 userspace/lib/base/list.h userspace/lib/bpf/desc.h tests/lib/listjson.h \
 userspace/lib/model/datatype.h userspace/lib/nl/netlink.h \
 userspace/lib/base/ctx.h userspace/include/cgfw/cgfw.h \
 userspace/lib/model/model.h userspace/lib/front/cgroup.h
build-san/ksft/kselftest_harness.h:
build-san/ksft/kselftest.h:
userspace/lib/base/json.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
userspace/lib/bpf/desc.h:
tests/lib/listjson.h:
userspace/lib/model/datatype.h:
userspace/lib/nl/netlink.h:
userspace/lib/base/ctx.h:
userspace/include/cgfw/cgfw.h:
userspace/lib/model/model.h:
userspace/lib/front/cgroup.h:
