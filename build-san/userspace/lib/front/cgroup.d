build-san/userspace/lib/front/cgroup.o: userspace/lib/front/cgroup.c \
 userspace/lib/front/cgroup.h userspace/lib/base/ctx.h \
 userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
 userspace/lib/base/list.h
userspace/lib/front/cgroup.h:
userspace/lib/base/ctx.h:
userspace/include/cgfw/cgfw.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
