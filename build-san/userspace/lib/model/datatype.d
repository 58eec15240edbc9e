build-san/userspace/lib/model/datatype.o: userspace/lib/model/datatype.c \
 userspace/lib/front/intervals.h userspace/lib/model/datatype.h \
 userspace/lib/base/list.h
userspace/lib/front/intervals.h:
userspace/lib/model/datatype.h:
userspace/lib/base/list.h:
