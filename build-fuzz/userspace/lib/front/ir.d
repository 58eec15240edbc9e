build-fuzz/userspace/lib/front/ir.o: userspace/lib/front/ir.c \
  userspace/lib/front/ir.h userspace/lib/base/ctx.h \
  userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
  userspace/lib/base/list.h userspace/lib/front/cgroup.h

userspace/lib/front/ir.h:

userspace/lib/base/ctx.h:

userspace/include/cgfw/cgfw.h:

userspace/lib/base/strbuf.h:

userspace/lib/base/list.h:

userspace/lib/front/cgroup.h:
