build-san/userspace/lib/front/rewrite.o: userspace/lib/front/rewrite.c \
 userspace/lib/front/rewrite.h userspace/lib/base/ctx.h \
 userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
 userspace/lib/base/list.h userspace/lib/front/cgroup.h
userspace/lib/front/rewrite.h:
userspace/lib/base/ctx.h:
userspace/include/cgfw/cgfw.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
userspace/lib/front/cgroup.h:
