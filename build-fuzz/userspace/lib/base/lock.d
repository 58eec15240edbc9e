build-fuzz/userspace/lib/base/lock.o: userspace/lib/base/lock.c \
  userspace/lib/base/lock.h userspace/lib/base/ctx.h \
  userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
  userspace/lib/base/list.h

userspace/lib/base/lock.h:

userspace/lib/base/ctx.h:

userspace/include/cgfw/cgfw.h:

userspace/lib/base/strbuf.h:

userspace/lib/base/list.h:
