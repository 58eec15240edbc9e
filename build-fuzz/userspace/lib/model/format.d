build-fuzz/userspace/lib/model/format.o: userspace/lib/model/format.c \
  userspace/lib/base/ctx.h userspace/include/cgfw/cgfw.h \
  userspace/lib/base/strbuf.h userspace/lib/base/list.h \
  userspace/lib/base/json.h userspace/lib/model/datatype.h \
  userspace/lib/model/model.h userspace/lib/front/cgroup.h

userspace/lib/base/ctx.h:

userspace/include/cgfw/cgfw.h:

userspace/lib/base/strbuf.h:

userspace/lib/base/list.h:

userspace/lib/base/json.h:

userspace/lib/model/datatype.h:

userspace/lib/model/model.h:

userspace/lib/front/cgroup.h:
