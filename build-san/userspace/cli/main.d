build-san/userspace/cli/main.o: userspace/cli/main.c \
 userspace/include/cgfw/cgfw.h userspace/cli/daemon.h
userspace/include/cgfw/cgfw.h:
userspace/cli/daemon.h:
