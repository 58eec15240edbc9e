build-fuzz/userspace/lib/front/readback.o: userspace/lib/front/readback.c \
  userspace/lib/front/readback.h userspace/lib/front/ir.h \
  userspace/lib/base/ctx.h userspace/include/cgfw/cgfw.h \
  userspace/lib/base/strbuf.h userspace/lib/base/list.h \
  userspace/lib/front/cgroup.h userspace/lib/nl/netlink.h

userspace/lib/front/readback.h:

userspace/lib/front/ir.h:

userspace/lib/base/ctx.h:

userspace/include/cgfw/cgfw.h:

userspace/lib/base/strbuf.h:

userspace/lib/base/list.h:

userspace/lib/front/cgroup.h:

userspace/lib/nl/netlink.h:
