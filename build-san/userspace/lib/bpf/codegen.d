build-san/userspace/lib/bpf/codegen.o: userspace/lib/bpf/codegen.c \
 userspace/lib/bpf/codegen.h userspace/lib/bpf/table.h \
 userspace/lib/bpf/emit.h userspace/lib/backend_ops.h \
 userspace/lib/front/ir.h userspace/lib/base/ctx.h \
 userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
 userspace/lib/base/list.h userspace/lib/front/cgroup.h \
 userspace/lib/model/model.h userspace/lib/update_cmds.h \
 userspace/lib/base/list.h userspace/lib/front/rewrite.h \
 userspace/lib/front/ir.h userspace/lib/front/intervals.h
userspace/lib/bpf/codegen.h:
userspace/lib/bpf/table.h:
userspace/lib/bpf/emit.h:
userspace/lib/backend_ops.h:
userspace/lib/front/ir.h:
userspace/lib/base/ctx.h:
userspace/include/cgfw/cgfw.h:
userspace/lib/base/strbuf.h:
userspace/lib/base/list.h:
userspace/lib/front/cgroup.h:
userspace/lib/model/model.h:
userspace/lib/update_cmds.h:
userspace/lib/base/list.h:
userspace/lib/front/rewrite.h:
userspace/lib/front/ir.h:
userspace/lib/front/intervals.h:
