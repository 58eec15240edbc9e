build-san/userspace/lib/front/intervals.o: \
 userspace/lib/front/intervals.c userspace/lib/front/intervals.h
userspace/lib/front/intervals.h:
