build-san/userspace/cli/main.o: userspace/cli/main.c \
 userspace/include/cgfw/cgfw.h
userspace/include/cgfw/cgfw.h:
