build-san/userspace/lib/base/strbuf.o: userspace/lib/base/strbuf.c \
 userspace/lib/base/strbuf.h userspace/lib/base/list.h
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
