build-san/userspace/lib/model/model.o: userspace/lib/model/model.c \
 userspace/lib/front/intervals.h userspace/lib/model/model.h \
 userspace/lib/front/cgroup.h userspace/lib/base/ctx.h \
 userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
 userspace/lib/base/list.h
userspace/lib/front/intervals.h:
userspace/lib/model/model.h:
userspace/lib/front/cgroup.h:
userspace/lib/base/ctx.h:
userspace/include/cgfw/cgfw.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
