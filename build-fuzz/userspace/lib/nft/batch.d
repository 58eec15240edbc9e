build-fuzz/userspace/lib/nft/batch.o: userspace/lib/nft/batch.c \
  userspace/lib/nft/nft.h userspace/lib/backend_ops.h \
  userspace/lib/front/ir.h userspace/lib/base/ctx.h \
  userspace/include/cgfw/cgfw.h userspace/lib/base/strbuf.h \
  userspace/lib/base/list.h userspace/lib/front/cgroup.h \
  userspace/lib/model/model.h userspace/lib/update_cmds.h \
  userspace/lib/front/rewrite.h userspace/lib/nl/netlink.h

userspace/lib/nft/nft.h:

userspace/lib/backend_ops.h:

userspace/lib/front/ir.h:

userspace/lib/base/ctx.h:

userspace/include/cgfw/cgfw.h:

userspace/lib/base/strbuf.h:

userspace/lib/base/list.h:

userspace/lib/front/cgroup.h:

userspace/lib/model/model.h:

userspace/lib/update_cmds.h:

userspace/lib/front/rewrite.h:

userspace/lib/nl/netlink.h:
