build-san/userspace/lib/base/ctx.o: userspace/lib/base/ctx.c \
 userspace/lib/base/ctx.h userspace/include/cgfw/cgfw.h \
 userspace/lib/base/strbuf.h userspace/lib/base/list.h
userspace/lib/base/ctx.h:
userspace/include/cgfw/cgfw.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
