build-fuzz/userspace/lib/front/compile.o: userspace/lib/front/compile.c \
  userspace/lib/base/child.h userspace/lib/base/strbuf.h \
  userspace/lib/base/list.h userspace/lib/front/compile.h \
  userspace/lib/base/ctx.h userspace/include/cgfw/cgfw.h \
  userspace/lib/front/ir.h userspace/lib/front/cgroup.h \
  userspace/lib/front/readback.h userspace/lib/nl/netlink.h

userspace/lib/base/child.h:

userspace/lib/base/strbuf.h:

userspace/lib/base/list.h:

userspace/lib/front/compile.h:

userspace/lib/base/ctx.h:

userspace/include/cgfw/cgfw.h:

userspace/lib/front/ir.h:

userspace/lib/front/cgroup.h:

userspace/lib/front/readback.h:

userspace/lib/nl/netlink.h:
