build-fuzz/userspace/lib/bpf/desc.o: userspace/lib/bpf/desc.c \
  userspace/lib/base/list.h userspace/lib/bpf/desc.h \
  userspace/lib/base/strbuf.h

userspace/lib/base/list.h:

userspace/lib/bpf/desc.h:

userspace/lib/base/strbuf.h:
