build-fuzz/userspace/lib/base/child.o: userspace/lib/base/child.c \
  userspace/lib/base/child.h userspace/lib/base/strbuf.h \
  userspace/lib/base/list.h

userspace/lib/base/child.h:

userspace/lib/base/strbuf.h:

userspace/lib/base/list.h:
