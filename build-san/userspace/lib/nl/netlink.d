build-san/userspace/lib/nl/netlink.o: userspace/lib/nl/netlink.c \
 userspace/lib/nl/netlink.h userspace/lib/base/ctx.h \
 userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
 userspace/lib/base/list.h
userspace/lib/nl/netlink.h:
userspace/lib/base/ctx.h:
userspace/include/cgfw/cgfw.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
