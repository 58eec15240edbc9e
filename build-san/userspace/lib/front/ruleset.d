build-san/userspace/lib/front/ruleset.o: userspace/lib/front/ruleset.c \
 userspace/lib/front/compile.h userspace/lib/base/ctx.h \
 userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
 userspace/lib/base/list.h userspace/lib/front/ir.h \
 userspace/lib/front/cgroup.h userspace/lib/front/rewrite.h
userspace/lib/front/compile.h:
userspace/lib/base/ctx.h:
userspace/include/cgfw/cgfw.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
userspace/lib/front/ir.h:
userspace/lib/front/cgroup.h:
userspace/lib/front/rewrite.h:
