build-san/userspace/lib/base/json.o: userspace/lib/base/json.c \
 userspace/lib/base/json.h userspace/lib/base/strbuf.h \
 userspace/lib/base/list.h
userspace/lib/base/json.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
